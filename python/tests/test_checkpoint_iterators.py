"""What TensorFlow's checkpoint guide needs beyond variables: a dataset iterator saved with a checkpoint
(ITERATOR_STATE) and restored to its position, lists assigned to a Checkpoint (TF's ListWrapper) restoring what is
appended later, and objects attached after restore() taking their values on assignment."""
import os

import numpy as np
import pytest

import kiln as tf


def test_iterator_position_round_trips(tmp_path):
    ds = tf.data.Dataset.range(100).batch(3)
    it = iter(ds)
    for _ in range(4):
        next(it)
    prefix = tf.train.Checkpoint(iterator=it).write(os.path.join(tmp_path, "it"))
    assert dict(tf.train.list_variables(prefix))["iterator/.ATTRIBUTES/ITERATOR_STATE"] == []
    expected = next(it).numpy().tolist()  # [12, 13, 14]
    fresh = iter(ds)
    tf.train.Checkpoint(iterator=fresh).read(prefix).assert_consumed()
    assert next(fresh).numpy().tolist() == expected == [12, 13, 14]
    assert fresh.get_next().numpy().tolist() == [15, 16, 17]


def test_an_iterator_restore_reads_no_foreign_state(tmp_path):
    prefix = os.path.join(tmp_path, "v")
    tf.train.Checkpoint(iterator=tf.Variable(b"not an iterator state")).write(prefix)
    with pytest.raises(tf.errors.InvalidArgumentError, match="iterator state"):
        tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(3))).read(prefix)


def test_list_wrapper_restores_what_is_appended(tmp_path):
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    path = save.save(os.path.join(tmp_path, "list"))
    restore = tf.train.Checkpoint()
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    restore.restore(path)
    v1, v2 = tf.Variable(0.0), tf.Variable(0.0)
    restore.listed.append(v1)
    restore.listed.extend([v2])
    assert (v1.numpy(), v2.numpy()) == (1.0, 2.0)


def test_attributes_set_after_restore_take_their_values(tmp_path):
    net = tf.train.Checkpoint(l1=tf.train.Checkpoint(bias=tf.Variable([1.0, 2.0]), kernel=tf.Variable([[3.0]])))
    path = tf.train.Checkpoint(net=net).save(os.path.join(tmp_path, "ckpt"))
    bias = tf.Variable(tf.zeros([2]))
    layer = tf.train.Checkpoint(bias=bias)
    fake_net = tf.train.Checkpoint(l1=layer)  # kept, as the guide keeps them: the pending values hang on the root
    new_root = tf.train.Checkpoint(net=fake_net)
    status = new_root.restore(path)
    np.testing.assert_array_equal(bias.numpy(), [1.0, 2.0])
    status.assert_existing_objects_matched()
    kernel = tf.Variable(tf.zeros([1, 1]))
    layer.kernel = kernel  # deferred: restored when attached
    np.testing.assert_array_equal(kernel.numpy(), [[3.0]])

