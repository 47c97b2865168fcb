"""keras.utils.audio_dataset_from_directory (Keras 2.15's rules): the files it finds and prints, padded batches
of the decoded samples against the WAV files' own values (written here with Python's wave module), a fixed
output_sequence_length, validation splits, label modes, ragged batches, and Keras' errors."""
import os
import wave

import numpy as np
import pytest

import kiln as tf


def write_wav(path, pcm, rate=16000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.asarray(pcm, "<i2").tobytes())


@pytest.fixture
def audio_dir(tmp_path):
    """Two classes of mono clips of different lengths; each clip's samples all equal a value telling it apart."""
    clips = {}
    for c, name in enumerate(["no", "yes"]):
        os.makedirs(tmp_path / name)
        for i in range(5):
            value, length = 100 * (c * 5 + i + 1), 10 + 3 * i + c
            write_wav(tmp_path / name / f"clip{i}.wav", np.full(length, value))
            clips[value] = (length, c)
    (tmp_path / "no" / "notes.txt").write_text("not audio")
    return tmp_path, clips


def test_padded_batches_hold_the_files(audio_dir, capsys):
    directory, clips = audio_dir
    ds = tf.keras.utils.audio_dataset_from_directory(directory, batch_size=4, seed=1)
    assert capsys.readouterr().out == "Found 10 files belonging to 2 classes.\n"
    assert ds.class_names == ["no", "yes"]
    audio_spec, label_spec = ds.element_spec
    assert audio_spec.dtype == tf.float32 and audio_spec.shape.rank == 3
    assert label_spec.dtype == tf.int32 and label_spec.shape.rank == 1
    seen = []
    for audio, labels in ds:
        audio = audio.numpy()
        assert audio.shape[0] == len(labels) and audio.shape[2] == 1
        assert audio.shape[1] == max(clips[round(a[0, 0] * 32768)][0] for a in audio)  # padded to the longest
        for a, label in zip(audio, labels.numpy()):
            value = round(a[0, 0] * 32768)
            length, c = clips[value]
            assert label == c
            np.testing.assert_array_equal(a[:length, 0], np.float32(value / 32768))
            assert (a[length:] == 0).all()
            seen.append(value)
    assert sorted(seen) == sorted(clips)


def test_fixed_length_split_and_categorical_labels(audio_dir, capsys):
    directory, clips = audio_dir
    train, val = tf.keras.utils.audio_dataset_from_directory(
        directory, batch_size=3, validation_split=0.2, seed=0, output_sequence_length=16, subset="both",
        label_mode="categorical")
    assert capsys.readouterr().out == ("Found 10 files belonging to 2 classes.\nUsing 8 files for training.\n"
                                       "Using 2 files for validation.\n")
    # (TF traces the map: [None, 16, None]; Kiln's spec after a map is its first element's, README.)
    assert train.element_spec[0].shape.as_list()[1] == 16 and train.element_spec[1].shape.as_list()[1] == 2
    values = []
    for ds in (train, val):
        for audio, labels in ds:
            assert audio.shape[1:] == (16, 1)
            for a, label in zip(audio.numpy(), labels.numpy()):
                value = round(a[0, 0] * 32768)
                length, c = clips[value]
                np.testing.assert_array_equal(label, np.eye(2)[c])
                assert (a[min(length, 16):] == 0).all()
                values.append(value)
    assert sorted(values) == sorted(clips)
    # The validation half is not shuffled: the same order on each pass.
    first = [a.numpy().tolist() for a, _ in val]
    assert [a.numpy().tolist() for a, _ in val] == first


def test_no_labels_binary_and_ragged(audio_dir, capsys):
    directory, clips = audio_dir
    ds = tf.keras.utils.audio_dataset_from_directory(directory, labels=None, batch_size=None, shuffle=False)
    assert capsys.readouterr().out == "Found 10 files.\n"
    lengths = [a.shape[0] for a in ds]
    assert lengths == [10, 13, 16, 19, 22, 11, 14, 17, 20, 23]  # sorted paths: no/clip0..4, yes/clip0..4
    # (Keras pads batches with padded_shapes=([None, None], []), which a binary label's (1,) does not fit, in TF
    # too: binary labels need output_sequence_length.)
    binary = tf.keras.utils.audio_dataset_from_directory(directory, label_mode="binary", batch_size=10,
                                                         shuffle=False, output_sequence_length=30)
    _, labels = next(iter(binary))
    assert labels.dtype == tf.float32 and labels.shape == (10, 1)
    np.testing.assert_array_equal(labels.numpy()[:, 0], [0] * 5 + [1] * 5)
    rag = tf.keras.utils.audio_dataset_from_directory(directory, ragged=True, batch_size=10, shuffle=False)
    audio, _ = next(iter(rag))
    assert isinstance(audio, tf.RaggedTensor)
    assert audio.row_lengths().numpy().tolist() == lengths


def test_keras_errors(audio_dir, tmp_path):
    directory, _ = audio_dir
    with pytest.raises(ValueError, match="Cannot set both `ragged` and `output_sequence_length`"):
        tf.keras.utils.audio_dataset_from_directory(directory, ragged=True, output_sequence_length=5)
    with pytest.raises(ValueError, match="`label_mode` argument must be one of"):
        tf.keras.utils.audio_dataset_from_directory(directory, label_mode="sparse")
    with pytest.raises(ValueError, match="`sampling_rate` should be higher than 0"):
        tf.keras.utils.audio_dataset_from_directory(directory, sampling_rate=0)
    with pytest.raises(ImportError, match="tensorflow_io"):
        tf.keras.utils.audio_dataset_from_directory(directory, sampling_rate=8000)
    empty = tmp_path / "empty"
    os.makedirs(empty / "a")
    with pytest.raises(ValueError, match=r"No audio files found in directory .*Allowed format\(s\): \('.wav',\)"):
        tf.keras.utils.audio_dataset_from_directory(empty)


def test_a_bad_file_raises_tfs_error(tmp_path):
    os.makedirs(tmp_path / "a")
    (tmp_path / "a" / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt " + bytes(8))
    # TF raises when the dataset runs; Kiln may already when padded_batch reads the first element's spec.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Bad format chunk size for WAV"):
        next(iter(tf.keras.utils.audio_dataset_from_directory(tmp_path, batch_size=1)))
