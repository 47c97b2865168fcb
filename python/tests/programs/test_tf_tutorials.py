"""TensorFlow's quickstart tutorials (examples/python/tutorials, the notebooks' code with only the import
changed) on small synthetic MNIST files: they run to the end, learn, and print what the notebooks print."""
import re

import pytest

from keras_util import run_example, synthetic_mnist, without_progress


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("mnist"))
    synthetic_mnist(directory, train=400, test=100)
    return directory


def run_tutorial(name, mnist_dir):
    return without_progress(run_example("tutorials", name, env={"KILN_MNIST_DIR": mnist_dir}))


def test_quickstart_beginner(mnist_dir):
    out = run_tutorial("quickstart_beginner.py", mnist_dir)
    assert out.startswith("TensorFlow version: 2.15.0\narray([[")
    assert re.search(r"^\d\.\d+$", out, re.M)  # the untrained loss, about log(10) = 2.3
    untrained = float(re.search(r"^(\d\.\d+)$", out, re.M).group(1))
    assert 1.0 < untrained < 4.0
    losses = [float(v) for v in
              re.findall(r"Epoch \d/5\n13/13 \[=+\] - \d+s \d+\w+/step - loss: ([\d.]+) - accuracy", out)]
    assert len(losses) == 5 and losses[-1] < losses[0]
    evaluation = re.search(r"^\[([\d.e-]+), ([\d.]+)\]$", out, re.M)
    assert float(evaluation.group(2)) > 0.8
    assert "shape=(5, 10), dtype=float32)" in out  # probability_model(x_test[:5])


def test_quickstart_advanced(mnist_dir):
    out = run_tutorial("quickstart_advanced.py", mnist_dir)
    rows = re.findall(r"^Epoch (\d), Loss: ([\d.]+), Accuracy: ([\d.]+), Test Loss: ([\d.]+), Test Accuracy: "
                      r"([\d.]+)$", out, re.M)
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    assert float(rows[-1][1]) < float(rows[0][1]) and float(rows[-1][4]) > 80


def test_tfrecord_tutorial():
    out = without_progress(run_example("tutorials", "load_data", "tfrecord.py"))
    assert out.startswith('bytes_list {\n  value: "test_string"\n}\n\nbytes_list {\n  value: "test_bytes"\n}\n\n'
                          'float_list {\n  value: 2.7182817459106445\n}\n\nint64_list {\n  value: 1\n}\n\n'
                          'int64_list {\n  value: 1\n}\n\n' + r"b'\x12\x06\n\x04T\xf8-@'" + "\n")
    # serialize_example(False, 4, b'goat', 0.9876) through py_function, then parsed back.
    assert re.search(r"^<kiln.Tensor: shape=\(\), dtype=string, numpy=b'\\nR\\n.*goat.*'>$", out, re.M)
    for field in ('key: "feature0"\n    value {\n      int64_list {\n        value: 0\n',
                  'key: "feature1"\n    value {\n      int64_list {\n        value: 4\n',
                  'key: "feature2"\n    value {\n      bytes_list {\n        value: "goat"\n',
                  'key: "feature3"\n    value {\n      float_list {\n        value: 0.9876000285148621\n'):
        assert field in out
    assert out.count("<Dataset element_spec=TensorSpec(shape=(), dtype=tf.string, name=None)>") == 2
    assert len(re.findall(r"^<kiln.Tensor: shape=\(\), dtype=string, numpy=b['\"]\\n", out, re.M)) == 11
    # The first record as a dict of arrays (keys in the Example's map order), then parsed by parse_single_example.
    (line,) = [ln for ln in out.splitlines() if ln.startswith("{'feature") and "array(" in ln]
    f0, f1, f3 = (re.search(rf"'{k}': array\(\[([-+\d.e]+)\]\)", line).group(1) for k in ("feature0", "feature1",
                                                                                          "feature3"))
    f2 = re.search(r"'feature2': array\(\[b'(\w+)'\], dtype='\|S\d'\)", line).group(1)
    assert f2 == ["cat", "dog", "chicken", "horse", "goat"][int(f1)]
    parsed = re.findall(r"^\{'feature0': <kiln.Tensor: shape=\(\), dtype=int64, numpy=(\d)>, 'feature1': "
                        r"<kiln.Tensor: shape=\(\), dtype=int64, numpy=(\d)>, 'feature2': <kiln.Tensor: shape=\(\), "
                        r"dtype=string, numpy=b'(\w+)'>, 'feature3': <kiln.Tensor: shape=\(\), dtype=float32, "
                        r"numpy=([-+\d.e]+)>\}$", out, re.M)
    assert len(parsed) == 10 and parsed[0][:3] == (f0, f1, f2)
    assert abs(float(parsed[0][3]) - float(f3)) < 1e-6
    assert all(p[2] == ["cat", "dog", "chicken", "horse", "goat"][int(p[1])] for p in parsed)


def test_csv_tutorial_tf_data_parts():
    out = without_progress(run_example("tutorials", "load_data", "csv_data.py"))
    # make_csv_dataset: a dict of 5-row columns with inferred types, the label apart.
    assert re.search(r"^sex                 : \[b'(male|female)'( b'(male|female)'){4}\]$", out, re.M)
    assert re.search(r"^age                 : \[[\d. ]+\]$", out, re.M)
    assert re.search(r"^label               : \[[01] [01] [01] [01] [01]\]$", out, re.M)
    # The GZIP file, its first five of 256 rows per column, then 60 batches shown every 40th: three times
    # (plain, cache(), snapshot()).
    assert re.search(r"^weather_main        : \[b'\w+' b'\w+' b'\w+' b'\w+' b'\w+'\]$", out, re.M)
    assert re.search(r"^label               : \[\d+ \d+ \d+ \d+ \d+\]$", out, re.M)
    assert "\n..\n..\n..\n" in out
    assert "['fonts/AGENCY.csv', 'fonts/ARIAL.csv', 'fonts/BAITI.csv', 'fonts/CALIBRI.csv', 'fonts/COURIER.csv']\n5\n" \
        in out
    assert "...\n[total: 412 features]\n(20, 20, 10)\n" in out  # make_images packs 400 pixel columns
    # decode_csv: all strings, then the titanic types (int() is int32); CsvDataset and TextLineDataset agree.
    assert out.count("type: string, shape: (627,)") == 10 + 5
    assert out.count("type: int32, shape: (627,)") == 3 and out.count("type: float32, shape: (627,)") == 2
    assert "[0, '', 0.0, 0, 0, 0.0, '', '', '', '']" in out
    assert out.count("[0, b'female', 20.0, 0, 0, 7.25, b'First', b'C', b'Southampton', b'n']") == 2
    assert "fonts/AGENCY.csv\n" + "b'AGENCY'\n" * 10 + "Epoch 1:\n" in out
    epochs = re.findall(r"Epoch \d:\n((?:     b'fonts/\w+\.csv'\n){5})", out)
    assert len(epochs) == 2 and all(sorted(e.split()) == sorted(epochs[0].split()) for e in epochs)
    fonts = re.search(r"^\{'font_name': (\[.*\]), 'character': (\[.*\])\}$", out, re.M)
    names, characters = eval(fonts.group(1)), eval(fonts.group(2))  # noqa: S307 - the program's own print
    assert len(set(names[:3])) == 3 and names[3:6] == names[:3]  # interleave(cycle_length=3): one row each
    assert characters == ["A", "A", "A", "B", "B", "B", "C", "C", "C", "D"]
    assert out.rstrip().endswith("}\n.\n.")  # one batch of 2048 rows (150 here) each way


def test_customization_basics():
    out = without_progress(run_example("tutorials", "customization_basics.py"))
    assert out.startswith("kiln.Tensor(3, shape=(), dtype=int32)\nkiln.Tensor([4 6], shape=(2,), dtype=int32)\n"
                          "kiln.Tensor(25, shape=(), dtype=int32)\nkiln.Tensor(6, shape=(), dtype=int32)\n"
                          "kiln.Tensor(13, shape=(), dtype=int32)\nkiln.Tensor([[2 3]], shape=(1, 2), dtype=int32)\n"
                          "(1, 2)\n<dtype: 'int32'>\n")
    assert "[[42. 42. 42.]\n [42. 42. 42.]\n [42. 42. 42.]], shape=(3, 3), dtype=float64)" in out
    assert "[[43. 43. 43.]\n [43. 43. 43.]\n [43. 43. 43.]]" in out
    assert "Is there a GPU available: \n[]\nIs the Tensor on GPU #0:  \nFalse\nOn CPU:\n10 loops: " in out
    squares = re.findall(r"^kiln.Tensor\(\[ *(\d+) +(\d+)\], shape=\(2,\), dtype=int32\)$",
                         out.split("Elements of ds_tensors:\n")[1], re.M)
    assert sorted(int(v) for pair in squares for v in pair) == [1, 4, 9, 16, 25, 36]  # squared, shuffled, batched
    assert out.endswith("\nElements in ds_file:\nkiln.Tensor([b'Line 1' b'Line 2'], shape=(2,), dtype=string)\n"
                        "kiln.Tensor([b'Line 3' b'  '], shape=(2,), dtype=string)\n")


def test_custom_layers():
    out = without_progress(run_example("tutorials", "custom_layers.py"))
    assert "<kiln.Tensor: shape=(10, 10), dtype=float32, numpy=array([[0., 0." in out
    assert "['my_dense_layer/kernel:0']" in out
    assert 'Model: ""\n' in out and "\n18\n" in out  # block.summary() of ResnetIdentityBlock(name=''), its layers' vars
    assert "Total params: 41 (164.00 Byte)\nTrainable params: 29 (116.00 Byte)\nNon-trainable params: 12 (48.00 Byte)" \
        in out
    assert out.count("Total params: 41 (164.00 Byte)") == 2  # the same block as a Sequential


def test_save_and_load(mnist_dir):
    out = run_tutorial("save_and_load.py", mnist_dir)
    assert out.startswith("2.15.0\n")
    assert out.count("Total params: 407050 (1.55 MB)") >= 3
    untrained = float(re.search(r"^Untrained model, accuracy: +([\d.]+)%$", out, re.M).group(1))
    restored = [float(v) for v in re.findall(r"^Restored model, accuracy: +([\d.]+)%$", out, re.M)]
    assert untrained < 40 and len(restored) >= 5 and min(restored) > 80
    assert "['cp.weights.h5']" in out and "'training_2/cp-0050.weights.h5'" in out
    assert sorted(re.search(r"^\[('cp-00\d\d.weights.h5'(?:, )?)+\]$", out, re.M).group(0)[1:-1].split(", ")) == \
        [f"'cp-{e:04d}.weights.h5'" for e in range(0, 51, 5)]  # every fifth epoch's checkpoint
    assert "(100, 10)" in out  # the SavedModel's predictions


def test_classification():
    out = without_progress(run_example("tutorials", "classification.py"))
    assert out.startswith("2.15.0\n(6000, 28, 28)\n6000\narray([9, 0, 0, ..., ")
    assert "(2000, 28, 28)\n2000\n" in out
    accuracy = float(re.search(r"^Test accuracy: ([\d.]+)$", out, re.M).group(1))
    assert accuracy > 0.75  # the tutorial: 0.88 on all 60,000 images
    assert out.rstrip().endswith("\n(28, 28)\n(1, 28, 28)\n" + out.rstrip().split("(1, 28, 28)\n")[1]) and \
        re.search(r"\]\]\n\d$", out.rstrip())


def test_cnn(tmp_path):
    # A synthetic CIFAR-10 archive in Keras' format, in a Keras cache of its own, unpacked there by load_data as
    # on first use (its hash is the synthetic file's, not Keras'); the program then reads the unpacked batches.
    import numpy as np

    import kiln as tf
    from dataset_files import cifar10_batches, sha256, write_cifar_archive
    home = str(tmp_path / "keras_home")
    archive = write_cifar_archive(home, "cifar-10-batches-py", cifar10_batches(per_batch=100, test=100))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERAS_HOME", home)
        patch.setattr(tf.keras.datasets.cifar10, "FILE_HASH", sha256(archive))
        (x_train, _), (x_test, _) = tf.keras.datasets.cifar10.load_data()
    assert x_train.shape == (500, 32, 32, 3) and x_test.shape == (100, 32, 32, 3) and x_train.dtype == np.uint8

    out = without_progress(run_example("tutorials", "cnn.py", env={"KERAS_HOME": home}))
    totals = re.findall(r"^Total params: (\d+) \(([\d.]+ \w+)\)$", out, re.M)
    assert totals == [("56320", "220.00 KB"), ("122570", "478.79 KB")]  # the two summaries the tutorial prints
    for layer, shape, params in (("conv2d (Conv2D)", r"\(None, 30, 30, 32\)", 896),
                                 ("conv2d_1 (Conv2D)", r"\(None, 13, 13, 64\)", 18496),
                                 ("conv2d_2 (Conv2D)", r"\(None, 4, 4, 64\)", 36928),
                                 ("flatten (Flatten)", r"\(None, 1024\)", 0),
                                 ("dense (Dense)", r"\(None, 64\)", 65600), ("dense_1 (Dense)", r"\(None, 10\)", 650)):
        assert re.search(rf"^ {re.escape(layer)} +{shape} +{params} +$", out, re.M), layer
    accuracies = [float(v) for v in re.findall(r"^Epoch \d+/10\n16/16 \[=+\] - .* - accuracy: ([\d.]+) - val_loss",
                                               out, re.M)]
    assert len(accuracies) == 10 and accuracies[-1] > accuracies[0]
    # evaluate(verbose=2), then print(test_acc).
    assert re.search(r"^4/4 - \d+s - loss: [\d.e+-]+ - accuracy: [\d.]+ - \d+m?s/epoch - \d+m?s/step$", out, re.M)
    assert float(out.rstrip().split("\n")[-1]) > 0.5  # ten classes: chance is 0.1


COMMANDS = ["down", "go", "left", "no", "right", "stop", "up", "yes"]


@pytest.fixture(scope="module")
def mini_speech_commands_zip(tmp_path_factory):
    """A small stand-in for mini_speech_commands.zip, synthesized here (provenance: this fixture; no recording):
    the real archive's layout (mini_speech_commands/<command>/<hash>_nohash_<n>.wav and a README.md), 42 mono
    16 kHz 16-bit WAV files per command written with Python's wave module, some shorter than a second as some
    real clips are. Each command is a chirp of its own pitch and sweep in a random window over noise, so the
    tutorial's model has something to learn; 336 files make the validation half two batches of 64, which the
    tutorial shards into its validation and test sets."""
    import io
    import wave
    import zipfile
    import numpy as np
    rng = np.random.default_rng(42)
    path = tmp_path_factory.mktemp("mini_speech_commands") / "mini_speech_commands.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mini_speech_commands/README.md", "Synthesized stand-in for the tests.\n")
        for label, command in enumerate(COMMANDS):
            for k in range(42):
                length = 16000 if k % 5 else 12000
                t = np.arange(length) / 16000.0
                start, span = rng.uniform(0.0, 0.3), rng.uniform(0.3, 0.6)
                envelope = np.clip(np.minimum(t - start, start + span - t) * 20, 0, 1)
                tone = np.sin(2 * np.pi * ((250.0 + 180.0 * label) * t + 150.0 * label * t * t))
                pcm = np.round((0.5 * envelope * tone + 0.02 * rng.standard_normal(length)) * 32767)
                name = "01bb6a2a_nohash_0" if (command, k) == ("no", 0) else f"{rng.integers(2**32):08x}_nohash_{k % 3}"
                buf = io.BytesIO()
                with wave.open(buf, "wb") as w:
                    w.setnchannels(1)
                    w.setsampwidth(2)
                    w.setframerate(16000)
                    w.writeframes(pcm.astype("<i2").tobytes())
                z.writestr(f"mini_speech_commands/{command}/{name}.wav", buf.getvalue())
    return str(path)


def test_simple_audio(mini_speech_commands_zip):
    """The whole audio tutorial: WAV files through audio_dataset_from_directory, spectrograms, a CNN that learns
    them, the exported module that reads a file by name, saved and loaded."""
    out = without_progress(run_example("tutorials", "simple_audio.py", env={
        "KILN_MINI_SPEECH_COMMANDS": mini_speech_commands_zip, "MPLBACKEND": "Agg"}))
    commands = re.search(r"^Commands: \[(.*)\]$", out, re.M).group(1)
    assert sorted(re.findall(r"'(\w+)'", commands)) == COMMANDS
    assert ("Found 336 files belonging to 8 classes.\nUsing 269 files for training.\nUsing 67 files for "
            "validation.\n\nlabel names: ['down' 'go' 'left' 'no' 'right' 'stop' 'up' 'yes']\n") in out
    # train_ds.element_spec: TF's traced map leaves (None, 16000, None) and (None,); Kiln's spec after a map is its
    # first element's (README, "print(dataset)").
    assert ("(TensorSpec(shape=(64, 16000, 1), dtype=tf.float32, name=None), TensorSpec(shape=(64,), "
            "dtype=tf.int32, name=None))\n(64, 16000)\n(64,)\narray(['go', 'go', 'no', 'down'], dtype='<U5')\n") in out
    assert len(re.findall(r"^Label: (?:down|go|left|no|right|stop|up|yes)\nWaveform shape: \(16000,\)\n"
                          r"Spectrogram shape: \(124, 129, 1\)\nAudio playback\n<IPython.lib.display.Audio object>$",
                          out, re.M)) == 3
    assert "Input shape: (124, 129, 1)\n" in out and "Total params: 1625611" in out
    epochs = re.findall(r"^5/5 \[=+\] - .* - loss: ([\d.e+-]+) - accuracy: ([\d.]+) - val_loss: [\d.e+-]+ - "
                        r"val_accuracy: ([\d.]+)$", out, re.M)
    assert 3 <= len(epochs) <= 10 and float(epochs[-1][0]) < float(epochs[0][0])
    evaluation = re.search(r"^\{'loss': ([\d.e+-]+), 'accuracy': ([\d.]+)\}$", out, re.M)
    assert float(evaluation.group(2)) > 0.3  # eight commands: chance is 0.125
    # export(...) on the file's name, then the loaded module on the decoded waveform: the same class.
    exported = re.findall(r"'class_names': <kiln.Tensor: shape=\(1,\), dtype=string, numpy=array\(\[b'(\w+)'\]",
                          out)
    assert len(exported) == 2 and exported[0] == exported[1]


def test_regression():
    # TF's "Basic regression" on a synthetic auto-mpg.data: pandas frames and Series feed fit/predict (a Series is
    # one feature column), Normalization adapts on 1-D data under input_shape=[1] and shows its mean, and the
    # summaries print TF's parameter counts for the tutorial's four models.
    out = without_progress(run_example("tutorials", "regression.py"))
    assert out.startswith("2.15.0\n")
    assert re.search(r"^\[\[ +5\.549 +250\.146 +114\.536 +3240\.641 +16\.116 +75\.838 +0\.213 +0\.183\n +0\.604\]\]$",
                     out, re.M)  # normalizer.mean of the stand-in data, in the tutorial's print options
    for total, trainable, frozen in (("5 (24.00 Byte)", "2 (8.00 Byte)", "3 (16.00 Byte)"),
                                     ("4356 (17.02 KB)", "4353 (17.00 KB)", "3 (16.00 Byte)"),
                                     ("4884 (19.08 KB)", "4865 (19.00 KB)", "19 (80.00 Byte)")):
        assert (f"Total params: {total}\nTrainable params: {trainable}\nNon-trainable params: {frozen}\n") in out
    table = re.findall(r"^(\w+) +([\d.]+)$", out.split("Mean absolute error [MPG]")[-1], re.M)
    assert [name for name, _ in table] == ["horsepower_model", "linear_model", "dnn_horsepower_model", "dnn_model",
                                           "reloaded"]
    errors = {name: float(v) for name, v in table}
    assert errors["reloaded"] == errors["dnn_model"] and max(errors.values()) < 4  # MPG spans 9-46


def test_imbalanced_data():
    # TF's "Classification on imbalanced data" on a synthetic creditcard.csv: the tutorial's metrics (named "cross
    # entropy" and "Brier score"), the careful initial bias, class weights, and resampling with tf.data.
    out = without_progress(run_example("tutorials", "imbalanced_data.py"))
    assert "Examples:\n    Total: 2500\n    Positive: 61 (2.44% of total)\n" in out
    assert "Total params: 497 (1.94 KB)\nTrainable params: 497 (1.94 KB)\n" in out
    assert "\narray([-3.68846953])\n" in out  # log(pos / neg), the bias that starts at the base rate
    names = ["loss", "cross entropy", "Brier score", "tp", "fp", "tn", "fn", "accuracy", "precision", "recall", "auc",
             "prc"]
    blocks = re.findall(r"^loss :  [\d.]+\n(?:.+ :  [\d.e-]+\n){11}", out, re.M)
    assert len(blocks) == 3  # baseline, class-weighted, resampled
    for block in blocks:
        values = dict(re.findall(r"^(.+) :  ([\d.e-]+)$", block, re.M))
        assert list(values) == names and values["loss"] == values["cross entropy"]
        assert sum(float(values[k]) for k in ("tp", "fp", "tn", "fn")) == 500  # the test split
    assert "Weight for class 0: 0.51\nWeight for class 1: 20.49\n" in out
    # The training negatives, then them with the positives oversampled to their count (the split is the run's).
    negatives, both = map(int, re.search(r"^\((\d+), 29\)\n\((\d+), 29\)$", out, re.M).groups())
    assert both == 2 * negatives and 1500 < negatives < 1600
    resampled = dict(re.findall(r"^(.+) :  ([\d.e-]+)$", blocks[-1], re.M))
    assert float(resampled["auc"]) > 0.9  # balanced batches learn the shifted features


def _matrices(out):
    """The NumPy matrices printed (rows of numbers in brackets), each as a list of rows."""
    blocks = re.findall(r"^\[\[[-\d.e \n\[\]]*?\]\]$", out, re.M)
    return [[[float(v) for v in row.split()] for row in re.findall(r"\[([^\[\]]+)\]", block)] for block in blocks]


def test_feature_columns_tutorial():
    out = without_progress(run_example("tutorials", "structured_data", "feature_columns.py"))
    assert "384 train examples\n96 validation examples\n120 test examples" in out  # 600 rows split 0.2, 0.2
    assert ("Every feature: ['Type', 'Age', 'Breed1', 'Gender', 'Color1', 'Color2', 'MaturitySize', 'FurLength', "
            "'Vaccinated', 'Sterilized', 'Health', 'Fee', 'PhotoAmt']") in out
    assert re.search(r"^A batch of ages: kiln.Tensor\(\[[\d ]+\], shape=\(5,\), dtype=int64\)$", out, re.M)
    numeric, buckets, animal, embedding, hashed, crossed = _matrices(out)[:6]
    assert [len(m[0]) for m in (numeric, buckets, animal, embedding, hashed, crossed)] == [1, 4, 2, 8, 10, 10]
    for one_hot in (buckets, animal, hashed, crossed):  # each sample one id (the synthetic data has no OOV Type)
        assert all(sorted(row) == [0.0] * (len(row) - 1) + [1.0] for row in one_hot)
    assert all(abs(v) < 2 for row in embedding for v in row)  # truncated normal, stddev 1/sqrt(8)
    accuracy = float(re.search(r"^Accuracy ([\d.]+)$", out, re.M).group(1))
    assert accuracy > 0.7  # young pets with photos are adopted in the stand-in data
