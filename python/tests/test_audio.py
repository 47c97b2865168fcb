"""tf.audio (src/ops/audio_ops.cpp, src/ops/wav_format.cpp): WAV files written by Python's `wave` module decoded
to the values NumPy reads from them, encode_wav's bytes against `wave`'s, round trips, desired channels and
samples, traced and eager alike, inside dataset maps and saved models, and TF's InvalidArgumentError on every
file TF refuses (hand-damaged and fuzzed)."""
import io
import struct
import wave

import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(11)


def wav_bytes(pcm, rate=16000):
    """A WAV file written by Python's wave module: pcm is int16 [frames, channels]."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(pcm.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype("<i2").tobytes())
    return buf.getvalue()


def numpy_decoding(data):
    """What the file holds, read with wave and NumPy: float32 [frames, channels] (int16 / 32768), the rate."""
    with wave.open(io.BytesIO(data), "rb") as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, w.getnchannels())
        return (frames.astype(np.float64) / 32768).astype(np.float32), w.getframerate()


@pytest.mark.parametrize("channels,frames,rate", [(1, 1000, 16000), (2, 333, 44100), (5, 7, 8000)])
def test_decode_matches_wave_and_numpy(channels, frames, rate):
    pcm = RNG.integers(-32768, 32768, (frames, channels))
    pcm[0, 0], pcm[-1, -1] = -32768, 32767  # the extremes: -1.0 and the largest sample below 1
    data = wav_bytes(pcm, rate)
    audio, sample_rate = tf.audio.decode_wav(data)
    want, want_rate = numpy_decoding(data)
    assert audio.dtype == tf.float32 and audio.shape == (frames, channels)
    np.testing.assert_array_equal(audio.numpy(), want)
    assert sample_rate.dtype == tf.int32 and sample_rate.shape == () and int(sample_rate) == want_rate == rate
    assert audio.numpy().min() >= -1.0 and audio.numpy().max() < 1.0


def test_decode_result_is_tfs_named_tuple():
    result = tf.audio.decode_wav(wav_bytes(np.zeros((3, 1), int)))
    assert type(result).__name__ == "DecodeWav" and result._fields == ("audio", "sample_rate")


def test_desired_channels_and_samples():
    pcm = np.array([[100, -200], [300, -400], [500, -600]])
    data = wav_bytes(pcm)
    full, _ = numpy_decoding(data)
    mono, _ = tf.audio.decode_wav(data, desired_channels=1)
    np.testing.assert_array_equal(mono.numpy(), full[:, :1])
    three, _ = tf.audio.decode_wav(data, desired_channels=3)  # the last channel repeats
    np.testing.assert_array_equal(three.numpy(), full[:, [0, 1, 1]])
    padded, _ = tf.audio.decode_wav(data, desired_samples=5)
    np.testing.assert_array_equal(padded.numpy(), np.concatenate([full, np.zeros((2, 2), np.float32)]))
    cut, _ = tf.audio.decode_wav(data, desired_channels=1, desired_samples=2)
    np.testing.assert_array_equal(cut.numpy(), full[:2, :1])


def test_encode_writes_what_wave_writes():
    audio = RNG.uniform(-1, 1, (50, 2)).astype(np.float32)
    data = tf.audio.encode_wav(audio, 22050)
    assert data.dtype == tf.string and data.shape == ()
    pcm = np.clip(np.round(audio.astype(np.float64) * 32768), -32768, 32767).astype(np.int16)
    assert data.numpy() == wav_bytes(pcm, 22050)


def test_encode_rounds_and_clamps_as_tf():
    audio = np.array([[1.0], [-1.0], [2.5], [-3.0], [0.5], [1 / 65536], [-1 / 65536]], np.float32)
    got, _ = numpy_decoding(tf.audio.encode_wav(audio, 8000).numpy())
    # 1.0 * 32768 is clamped to 32767; a half step rounds away from zero (roundf).
    np.testing.assert_array_equal(got[:, 0] * 32768, [32767, -32768, 32767, -32768, 16384, 1, -1])


def test_round_trip_of_int16_values_is_exact():
    pcm = RNG.integers(-32768, 32768, (400, 3))
    audio = (pcm / 32768).astype(np.float32)
    decoded, rate = tf.audio.decode_wav(tf.audio.encode_wav(audio, tf.constant(12000)))
    np.testing.assert_array_equal(decoded.numpy(), audio)
    assert int(rate) == 12000


def test_files_read_by_read_file_and_traced_decoding(tmp_path):
    pcm = RNG.integers(-32768, 32768, (64, 1))
    path = tmp_path / "clip.wav"
    path.write_bytes(wav_bytes(pcm))
    want, _ = numpy_decoding(path.read_bytes())

    traced_shapes = []

    @tf.function
    def load(p):
        audio, rate = tf.audio.decode_wav(tf.io.read_file(p), desired_channels=1, desired_samples=80)
        traced_shapes.append(audio.shape.as_list())
        return audio, rate

    audio, rate = load(tf.constant(str(path)))
    np.testing.assert_array_equal(audio.numpy(), np.concatenate([want, np.zeros((16, 1), np.float32)]))
    assert int(rate) == 16000

    @tf.function
    def unknown(c):
        audio = tf.audio.decode_wav(c)[0]
        traced_shapes.append(audio.shape.as_list())
        return audio
    np.testing.assert_array_equal(unknown(tf.constant(path.read_bytes())).numpy(), want)
    assert traced_shapes == [[80, 1], [None, None]]  # as TF's shape function: the desired dims, else unknown


def test_encode_inside_a_function_equals_eager():
    audio = RNG.uniform(-1, 1, (20, 2)).astype(np.float32)
    traced = tf.function(lambda a, r: tf.audio.encode_wav(a, r))(audio, tf.constant(16000))
    assert traced.numpy() == tf.audio.encode_wav(audio, 16000).numpy()


def test_dataset_map_decodes_files(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"{i}.wav"
        p.write_bytes(wav_bytes(np.full((10 + i, 1), 1000 * (i + 1))))
        paths.append(str(p))
    ds = tf.data.Dataset.from_tensor_slices(paths).map(
        lambda p: tf.audio.decode_wav(tf.io.read_file(p), desired_samples=12)[0])
    got = [a.numpy() for a in ds]
    for i, a in enumerate(got):
        assert a.shape == (12, 1)
        np.testing.assert_array_equal(a[:10 + i, 0], np.float32(1000 * (i + 1) / 32768))
        assert (a[10 + i:] == 0).all()


def test_saved_model_decodes_after_loading(tmp_path):
    class Decoder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def __call__(self, contents):
            return tf.audio.decode_wav(contents, desired_channels=2)

    tf.saved_model.save(Decoder(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    data = wav_bytes(RNG.integers(-32768, 32768, (9, 1)))
    audio, rate = loaded(tf.constant(data))
    want, _ = numpy_decoding(data)
    np.testing.assert_array_equal(audio.numpy(), np.repeat(want, 2, axis=1))
    assert int(rate) == 16000


def test_saved_model_reads_and_decodes_a_file_by_name(tmp_path):
    """tf.io.read_file inside a trace is the engine's ReadFile (not a host callback), so the module saves; the file
    is read when the loaded function runs, not when it was traced."""
    class Reader(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def __call__(self, path):
            return tf.audio.decode_wav(tf.io.read_file(path))[0]

    tf.saved_model.save(Reader(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    path = tmp_path / "later.wav"
    data = wav_bytes(RNG.integers(-32768, 32768, (7, 2)))
    path.write_bytes(data)
    np.testing.assert_array_equal(loaded(tf.constant(str(path))).numpy(), numpy_decoding(data)[0])
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        loaded(tf.constant(str(tmp_path / "missing.wav")))
    for read in (tf.io.read_file, tf.function(tf.io.read_file)):  # eager and traced alike
        with pytest.raises(tf.errors.FailedPreconditionError, match="Is a directory"):
            read(tf.constant(str(tmp_path)))


def _header(channels=1, rate=16000, bits=16, fmt_size=16, audio_format=1, block=None, byte_rate=None):
    block = block if block is not None else channels * bits // 8
    byte_rate = byte_rate if byte_rate is not None else rate * block
    return (b"RIFF" + struct.pack("<I", 100) + b"WAVEfmt " + struct.pack("<I", fmt_size) +
            struct.pack("<HHIIHH", audio_format, channels, rate, byte_rate, block, bits))


@pytest.mark.parametrize("data,message", [
    (b"", "Data too short when trying to read RIFF"),
    (b"RIFX" + bytes(40), "Header mismatch: Expected RIFF but found RIFX"),
    (_header(fmt_size=20), "Bad format chunk size for WAV: Expected 16 or 18, but got 20"),
    (_header(audio_format=3), "Bad audio format for WAV: Expected 1 (PCM), but got 3"),
    (_header(bits=8), "Can only read 16-bit WAV files, but received 8"),
    (_header(bits=24), "Can only read 16-bit WAV files, but received 24"),
    (_header(channels=0), "Bad number of channels for WAV: Expected at least 1, but got 0"),
    (_header(channels=2, block=2), "Bad bytes per sample in WAV header: Expected 4 but got 2"),
    (_header(byte_rate=7), "Bad bytes per second in WAV header: Expected 32000 but got 7"),
    (_header(), "No data chunk found in WAV"),
    (_header() + b"data" + struct.pack("<I", 10) + bytes(4), "Data too short when trying to read string"),
    (_header() + b"LIST" + struct.pack("<I", 1000), "Data too short when trying to read string"),
    (_header() + b"data" + struct.pack("<I", 2) + bytes(2) + b"data" + struct.pack("<I", 0),
     "More than one data chunk found in WAV"),
    (_header() + b"data" + struct.pack("<I", 0x80000000), "is too large"),
])
def test_bad_files_raise_invalid_argument(data, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tf.audio.decode_wav(data)


def test_extra_chunks_and_18_byte_format_are_read():
    pcm = np.array([[1, 2], [3, 4]], "<i2").tobytes()
    data = (b"RIFF" + struct.pack("<I", 0) + b"WAVEfmt " + struct.pack("<I", 18) +
            struct.pack("<HHIIHHH", 1, 2, 8000, 32000, 4, 16, 0) + b"LIST" + struct.pack("<I", 4) + b"INFO" +
            b"data" + struct.pack("<I", len(pcm)) + pcm)
    audio, rate = tf.audio.decode_wav(data)
    np.testing.assert_array_equal(audio.numpy() * 32768, [[1, 2], [3, 4]])
    assert int(rate) == 8000


def test_bad_arguments():
    data = wav_bytes(np.zeros((4, 1), int))
    with pytest.raises(tf.errors.InvalidArgumentError, match="contents must be scalar, got shape"):
        tf.audio.decode_wav(tf.constant([data, data]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="desired_channels"):
        tf.audio.decode_wav(data, desired_channels=-2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="2-dimensional"):
        tf.audio.encode_wav(np.zeros(5, np.float32), 16000)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"sample_rate must be in \(0, 2\^32\), got: 0"):
        tf.audio.encode_wav(np.zeros((5, 1), np.float32), 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_frames must be positive"):
        tf.audio.encode_wav(np.zeros((0, 1), np.float32), 16000)
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be a scalar"):
        tf.audio.encode_wav(np.zeros((5, 1), np.float32), [16000])


def test_fuzzed_files_decode_or_raise():
    seeds = [wav_bytes(RNG.integers(-32768, 32768, (n, c))) for n, c in ((5, 1), (3, 2), (1, 4))]
    rng = np.random.default_rng(3)
    for _ in range(600):
        data = bytearray(seeds[rng.integers(len(seeds))])
        for _ in range(rng.integers(1, 4)):
            if not data:
                break
            at = int(rng.integers(len(data)))
            choice = rng.integers(3)
            if choice == 0:
                data[at] = int(rng.integers(256))
            elif choice == 1:
                del data[at:]
            else:
                data[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8))
        try:
            audio, _ = tf.audio.decode_wav(bytes(data))
        except tf.errors.InvalidArgumentError:
            continue
        assert audio.numpy().min(initial=0) >= -1 and audio.numpy().max(initial=0) < 1
