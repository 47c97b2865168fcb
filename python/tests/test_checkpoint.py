"""tf.train.Checkpoint / CheckpointManager in TF's on-disk format: the `.index` table
checked against LevelDB's own code (plyvel), TF's keys and object graph, save and
restore of a Keras model with its optimizer's slots, the manager's bookkeeping, and
damaged files."""
import os
import struct

import numpy as np
import pytest

import kiln as tf
from kiln.io import _crc32c
from kiln.train import _table

keras = tf.keras


def model_and_optimizer(seed):
    rng = np.random.default_rng(seed)
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,)), keras.layers.Dense(1)])
    model.build((None, 2))
    for v in model.trainable_variables:
        v.assign(rng.normal(size=v.shape.as_list()).astype(np.float32))
    return model, keras.optimizers.Adam(0.1)


def train_step(model, opt):
    x = tf.constant([[1.0, 2.0], [3.0, -1.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


# ---- the .index table against LevelDB --------------------------------------------------------------

def internal(key, seq):
    """LevelDB's internal key: the user key, then (sequence << 8 | type 1) as fixed64."""
    return key + struct.pack("<Q", seq << 8 | 1)


def test_table_read_by_leveldb_and_leveldb_s_tables_read_here(tmp_path):
    plyvel = pytest.importorskip("plyvel")
    items = {f"key{i:05d}".encode(): os.urandom(i % 300) for i in range(600)}  # several data blocks
    db_dir = tmp_path / "written_here"
    db_dir.mkdir()
    table = _table.build([(internal(k, 1), v) for k, v in items.items()])
    (db_dir / "000005.ldb").write_bytes(table)
    plyvel.repair_db(str(db_dir))  # LevelDB's repair reads (and checks) every table of the directory
    db = plyvel.DB(str(db_dir))
    assert dict(db.iterator()) == items
    db.close()

    made = tmp_path / "written_by_leveldb"
    db = plyvel.DB(str(made), create_if_missing=True, compression=None)
    for k, v in items.items():
        db.put(k, v)
    db.compact_range()
    db.close()
    tables = [f for f in os.listdir(made) if f.endswith((".ldb", ".sst"))]
    assert tables
    read = {}
    for name in tables:
        read.update({k[:-8]: v for k, v in _table.read((made / name).read_bytes()).items()})
    assert read == items


def test_table_of_empty_values_and_prefix_keys_round_trips():
    items = [(b"", b"header"), (b"a", b""), (b"ab", b"x"), (b"abc/.ATTRIBUTES/VARIABLE_VALUE", b"y" * 5000)]
    assert _table.read(_table.build(items)) == dict(items)
    data = bytearray(_table.build(items))
    data[3] ^= 1
    with pytest.raises(_table.TableError, match="checksum"):
        _table.read(bytes(data))


# ---- Checkpoint ----------------------------------------------------------------------------------

def test_keys_and_object_graph_as_tf_writes_them(tmp_path):
    model, opt = model_and_optimizer(0)
    train_step(model, opt)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"]
    keys = dict(tf.train.list_variables(str(tmp_path)))
    assert keys["model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [2, 3]
    assert keys["model/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE"] == [1]
    assert keys["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert keys["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == []  # TF 2.15's Keras optimizer names
    assert keys["optimizer/_learning_rate/.ATTRIBUTES/VARIABLE_VALUE"] == []
    slot = "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"
    assert keys[slot] == [2, 3]
    assert keys["_CHECKPOINTABLE_OBJECT_GRAPH"] == []
    np.testing.assert_array_equal(tf.train.load_variable(path, "model/layer_with_weights-0/kernel/.ATTRIBUTES/"
                                                               "VARIABLE_VALUE"), model.layers[0].kernel.numpy())
    np.testing.assert_array_equal(tf.train.load_variable(path, slot), opt.get_slot(model.layers[0].kernel, "m").numpy())
    from kiln.io._messages import TrackableObjectGraph
    graph = TrackableObjectGraph.FromString(tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH"))
    root = graph.nodes[0]
    assert [c.local_name for c in root.children] == ["model", "optimizer", "save_counter"]
    opt_node = graph.nodes[root.children[1].node_id]
    assert sorted({s.slot_name for s in opt_node.slot_variables}) == ["m", "v"]
    state = open(tmp_path / "checkpoint").read()
    assert 'model_checkpoint_path: "ckpt-1"' in state and 'all_model_checkpoint_paths: "ckpt-1"' in state
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_dtype_map()["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == tf.int64
    assert all(n.has_checkpoint_values.value for n in graph.nodes)


def test_index_entries_hold_tf_s_bundle_protos(tmp_path):
    """The bundle's entries decoded by hand: the "" header, then each tensor's dtype, shape,
    offset, size and masked CRC-32C of its bytes in the data file."""
    from kiln.io._messages import BundleEntryProto, BundleHeaderProto
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    prefix = tf.train.Checkpoint(v=v).write(str(tmp_path / "w"))
    assert prefix == str(tmp_path / "w") and not (tmp_path / "checkpoint").exists()
    entries = _table.read((tmp_path / "w.index").read_bytes())
    header = BundleHeaderProto.FromString(entries[b""])
    assert header.num_shards == 1 and header.version.producer == 1
    entry = BundleEntryProto.FromString(entries[b"v/.ATTRIBUTES/VARIABLE_VALUE"])
    data = (tmp_path / "w.data-00000-of-00001").read_bytes()
    raw = data[entry.offset:entry.offset + entry.size]
    assert entry.dtype == 1 and [d.size for d in entry.shape.dim] == [2, 3]
    assert raw == np.arange(6, dtype="<f4").tobytes()
    assert entry.crc32c == _crc32c.masked_crc32c(raw)
    graph_entry = BundleEntryProto.FromString(entries[b"_CHECKPOINTABLE_OBJECT_GRAPH"])
    assert graph_entry.dtype == 7  # DT_STRING: varint length, masked CRC of the lengths, the bytes
    raw = data[graph_entry.offset:graph_entry.offset + graph_entry.size]
    n, pos = raw[0], 1  # a short graph: its length is one varint byte
    assert n < 128 and raw[pos + 4:] == tf.train.load_variable(prefix, "_CHECKPOINTABLE_OBJECT_GRAPH")
    length_crc = _crc32c.crc32c(struct.pack("<I", n))  # TF sums each length as a uint32
    assert struct.unpack("<I", raw[pos:pos + 4])[0] == _crc32c.mask(length_crc)
    assert not [f for f in os.listdir(tmp_path) if "tempstate" in f]


def test_restore_model_and_optimizer_then_train_on_identically(tmp_path):
    model, opt = model_and_optimizer(1)
    train_step(model, opt)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ckpt"))
    model2, opt2 = model_and_optimizer(2)  # other weights; its optimizer has made nothing yet
    status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    for a, b in zip(model.variables, model2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(opt2.iterations) == 1
    for var, var2 in zip(model.trainable_variables, model2.trainable_variables):
        for s in ("m", "v"):
            np.testing.assert_array_equal(opt.get_slot(var, s).numpy(), opt2.get_slot(var2, s).numpy())
    train_step(model, opt)
    train_step(model2, opt2)
    for a, b in zip(model.variables, model2.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_a_compiled_model_carries_its_optimizer(tmp_path):
    """TF's Model tracks the optimizer compile() set: Checkpoint(model=m) and save_weights keep its state."""
    def compiled(seed):
        tf.keras.utils.set_random_seed(seed)
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.compile(optimizer="adam", loss="mse")
        return model
    model = compiled(1)
    x, y = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), np.ones((4, 2), np.float32)
    model.fit(x, y, epochs=3, verbose=0)
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    keys = [name for name, _ in tf.train.list_variables(path)]
    assert "model/optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/model/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE" in keys
    model2 = compiled(2)
    tf.train.Checkpoint(model=model2).restore(path).assert_consumed()
    assert int(model2.optimizer.iterations) == 3
    kernel, kernel2 = model.layers[0].kernel, model2.layers[0].kernel
    np.testing.assert_array_equal(model.optimizer.get_slot(kernel, "v").numpy(),
                                  model2.optimizer.get_slot(kernel2, "v").numpy())
    model.fit(x, y, epochs=1, verbose=0)
    model2.fit(x, y, epochs=1, verbose=0)
    np.testing.assert_allclose(kernel.numpy(), kernel2.numpy(), rtol=1e-6)
    model.save_weights(str(tmp_path / "weights"))
    assert "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE" in [
        name for name, _ in tf.train.list_variables(str(tmp_path / "weights"))]


def test_partial_restores_and_their_status(tmp_path):
    model, opt = model_and_optimizer(3)
    train_step(model, opt)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ckpt"))
    only_model, _ = model_and_optimizer(4)
    status = tf.train.Checkpoint(model=only_model).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        status.assert_consumed()
    status.expect_partial().assert_existing_objects_matched()
    np.testing.assert_array_equal(only_model.layers[1].kernel.numpy(), model.layers[1].kernel.numpy())
    extra = tf.Variable(5.0)
    status = tf.train.Checkpoint(model=only_model, extra=extra).restore(path)
    with pytest.raises(AssertionError, match="Object not assigned a value from checkpoint"):
        status.assert_existing_objects_matched()
    assert float(extra) == 5.0
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        tf.train.Checkpoint(model=only_model).restore(None).assert_consumed()
    bad_shape = tf.train.Checkpoint(model=keras.Sequential([keras.layers.Dense(4, input_shape=(2,)),
                                                            keras.layers.Dense(1)]))
    bad_shape.model.build((None, 2))
    with pytest.raises(ValueError, match="incompatible tensor with shape"):
        bad_shape.restore(path)


def test_save_counter_and_plain_variables(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    table = {"w": tf.Variable([1.0, 2.0]), "names": [tf.Variable(3), tf.Variable(4)]}
    ckpt = tf.train.Checkpoint(step=step, table=table)
    for i in range(3):
        step.assign(i * 10)
        path = ckpt.save(str(tmp_path / "run" / "c"))
    assert path.endswith("c-3") and int(ckpt.save_counter) == 3
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) == path
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert "table/names/1/.ATTRIBUTES/VARIABLE_VALUE" in keys and "table/w/.ATTRIBUTES/VARIABLE_VALUE" in keys
    fresh = tf.train.Checkpoint(step=tf.Variable(0, dtype=tf.int64),
                                table={"w": tf.Variable([0.0, 0.0]), "names": [tf.Variable(0), tf.Variable(0)]})
    fresh.restore(path).assert_consumed()
    assert int(fresh.step) == 20 and int(fresh.save_counter) == 3
    assert fresh.save(str(tmp_path / "run" / "c")).endswith("c-4")  # numbering goes on


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    v = tf.Variable(0.0)
    ckpt = tf.train.Checkpoint(v=v)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert manager.latest_checkpoint is None
    for i in range(4):
        v.assign(float(i))
        manager.save()
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == ["ckpt-3.index", "ckpt-4.index"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "ckpt-4")
    assert list(state.all_model_checkpoint_paths) == manager.checkpoints
    assert tf.train.latest_checkpoint(str(tmp_path)) == manager.latest_checkpoint
    again = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(9.0)), str(tmp_path), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-4")
    assert float(again.checkpoint.v) == 3.0
    numbered = manager.save(checkpoint_number=100)
    assert numbered == str(tmp_path / "ckpt-100") and len(manager.checkpoints) == 2
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_damaged_and_missing_files_name_the_file(tmp_path):
    v = tf.Variable(np.ones(100, np.float32))
    path = tf.train.Checkpoint(v=v).save(str(tmp_path / "ckpt"))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint(v=v).restore(str(tmp_path / "nothing-1"))
    data_file = path + ".data-00000-of-00001"
    raw = open(data_file, "rb").read()
    with open(data_file, "wb") as f:
        f.write(raw[:40] + bytes([raw[40] ^ 0xFF]) + raw[41:])
    with pytest.raises(tf.errors.DataLossError, match="data-00000-of-00001.*Checksum does not match"):
        tf.train.Checkpoint(v=v).restore(path)
    with open(data_file, "wb") as f:
        f.write(raw[:50])
    with pytest.raises(tf.errors.DataLossError, match="data-00000-of-00001"):
        tf.train.Checkpoint(v=v).restore(path)
    index = path + ".index"
    good = open(index, "rb").read()
    for damaged in (good[:-10], good[:20], bytes(len(good)), good[:10] + bytes([good[10] ^ 4]) + good[11:]):
        with open(index, "wb") as f:
            f.write(damaged)
        with pytest.raises(tf.errors.DataLossError, match=r"ckpt-1\.index"):
            tf.train.Checkpoint(v=v).restore(path)
    with open(tmp_path / "checkpoint", "w") as f:
        f.write("model_checkpoint_path: ")
    with pytest.raises(tf.errors.DataLossError, match="checkpoint"):
        tf.train.latest_checkpoint(str(tmp_path))
