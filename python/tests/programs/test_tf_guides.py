"""TensorFlow's guides and tutorials under examples/python (the notebooks' code with only the import changed,
small synthetic data in place of downloads) run to the end and print what the notebooks print."""
import re

from keras_util import run_example, synthetic_mnist, without_progress


def run_program(*path):
    return without_progress(run_example(*path, timeout=900))


def test_the_data_guide():
    out = run_program("guides", "data.py")
    assert out.startswith("<Dataset element_spec=TensorSpec(shape=(), dtype=tf.int32, name=None)>\n8\n3\n0\n8\n2\n1\n"
                          "8\n22\n")  # iteration, next(), reduce
    assert ("(TensorSpec(shape=(10,), dtype=tf.float32, name=None), (TensorSpec(shape=(), dtype=tf.float32, "
            "name=None), TensorSpec(shape=(100,), dtype=tf.int32, name=None)))\n"
            "SparseTensorSpec(TensorShape([3, 4]), tf.int32)\n<class 'kiln.sparse_tensor.SparseTensor'>\n") in out
    assert "[20 21 22 23 24  0  1  2  3  4]" in out  # from_generator(count, args=[25]).repeat().batch(10)
    # TFRecord (a stand-in FSNS file): the Example's text feature, then parse_example in a map and a batch.
    assert 'bytes_list {\n  value: "Rue Perreyon"\n}\n' in out
    assert "b'Rue Perreyon'\nb'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR\\x00\\x00\\x00<' ...\n" in out
    assert re.search(r"^\(10,\)$", out, re.M)
    # TextLineDataset and interleave(cycle_length=3): one line of each file in turn.
    assert "\nb'cowper 0: " in out and re.search(r"b'cowper 1: .*'\nb'derby 1: .*'\nb'butler 1: .*'", out)
    assert "b'survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone'" in out
    assert re.search(r"^'survived': \[[01] [01] [01] [01]\]\nfeatures:\n  'sex'               : \[b'", out, re.M)
    assert re.search(r"^  'fare'              : \[[\d. ]+\]\n  'class'             : \[b'", out, re.M)
    assert "[0, b'female', 20.0, 0, 0, 7.25, b'First', b'C', b'Southampton', b'n']" in out  # CsvDataset
    # missing.csv with defaults 999, all columns then select_cols=[1, 3] (the guide's printed values).
    assert ("[1 2 3 4]\n[999   2   3   4]\n[  1 999   3   4]\n[  1   2 999   4]\n[  1   2   3 999]\n"
            "[999 999 999 999]") in out
    assert "[2 4]\n[2 4]\n[999   4]\n[2 4]\n[  2 999]\n[999 999]" in out
    assert "[array([0, 1, 2, 3]), array([ 0, -1, -2, -3])]" in out
    assert ("TensorSpec(shape=(7,), dtype=tf.int64, name=None), TensorSpec(shape=(7,), dtype=tf.int64, "
            "name=None))>") in out  # drop_remainder=True
    assert "[[0 0 0]\n [1 0 0]\n [2 2 0]\n [3 3 3]]" in out  # padded_batch
    assert out.count("(116,)") == 3 and "End of epoch:  2" in out
    # Windows (the guide's printed values).
    assert "0 1 2 3 4 1 2 3 4 5 2 3 4 5 6 3 4 5 6 7 4 5 6 7 8 5 6 7 8 9" in out
    assert "[45 48 51 54 57 60 63 66 69 72]" in out
    assert "[ 0  3  6  9 12 15 18 21 24] => [ 3  6  9 12 15 18 21 24 27]" in out
    assert "[0 1 2 3 4 5 6 7 8 9]  =>  [10 11 12]" in out
    # Resampling: the class fractions, the positives, and balanced batches (about half positive).
    fractions = [float(v) for v in re.search(r"^\[(0\.\d+) (0\.\d+)\]$", out, re.M).groups()]
    assert 0.95 < fractions[0] < 1.0 and abs(sum(fractions) - 1) < 1e-3
    assert "[1 1 1 1 1 1 1 1 1 1]" in out
    batches = re.findall(r"^\[([01](?: [01]){9})\]$", out, re.M)
    positives = sum(b.count("1") for b in batches[1:]) / (10 * len(batches[1:]))
    assert len(batches) == 21 and 0.3 < positives < 0.7
    # Iterator checkpointing: the restored iterator repeats 5..9.
    assert "[0, 1, 2, 3, 4]\n[5, 6, 7, 8, 9]\n[5, 6, 7, 8, 9]" in out
    assert len(re.findall(r"^Loss : [\d.]+\nAccuracy : [\d.]+$", out, re.M)) == 2
    assert re.findall(r"^\(\d+, 10\)$", out, re.M) == ["(320, 10)", "(320, 10)"]  # predict(steps=10), batches of 32


def test_custom_training_walkthrough():
    out = run_program("tutorials", "custom_training_walkthrough.py")
    assert re.search(r"^Prediction: \[[0-2 ]+\]\n    Labels: \[[0-2 ]+\]$", out, re.M)
    initial = float(re.search(r"Step: 0, Initial Loss: ([\d.]+)", out).group(1))
    after = float(re.search(r"Step: 1,         Loss: ([\d.]+)", out).group(1))
    assert after < initial
    epochs = re.findall(r"^Epoch (\d{3}): Loss: ([\d.]+), Accuracy: ([\d.]+)%$", out, re.M)
    assert [e[0] for e in epochs] == ["000", "050", "100", "150", "200"]
    # The tutorial seeds nothing: about one run in ten (here as in earlier builds) ends with two species
    # confused (about 70%) where the rest reach 92-99%, so the bounds below are what every run meets.
    assert float(epochs[-1][1]) < float(epochs[0][1]) and float(epochs[-1][2]) > max(60, float(epochs[0][2]))
    assert float(re.search(r"Test set accuracy: ([\d.]+)%", out).group(1)) > 60
    assert re.search(r"shape=\(6, 2\), dtype=int64\)", out)  # tf.stack([y, prediction], axis=1)
    predictions = re.findall(r"^Example (\d) prediction: (\w+) \( ?([\d.]+)%\)$", out, re.M)
    assert [p[0] for p in predictions] == ["0", "1", "2"]
    assert all(p[1] in ("Adélie", "Chinstrap", "Gentoo") and 33 < float(p[2]) <= 100 for p in predictions)
    assert predictions[1][1] == "Gentoo"  # [0.4, 0.1, 0.8, 0.5] lies by the Gentoo cluster


def test_the_checkpoint_guide():
    out = run_program("guides", "checkpoint.py")
    assert out.startswith("Initializing from scratch.\nSaved checkpoint for step 10: ./tf_ckpts/ckpt-1\n")
    assert "Restored from ./tf_ckpts/ckpt-5\nSaved checkpoint for step 60: ./tf_ckpts/ckpt-6\n" in out
    losses = [float(v) for v in re.findall(r"^loss ([\d.]+)$", out, re.M)]
    assert len(losses) == 10 and losses[-1] < losses[4] < losses[0]  # training resumed, not restarted
    assert "['./tf_ckpts/ckpt-8', './tf_ckpts/ckpt-9', './tf_ckpts/ckpt-10']" in out
    assert ("['checkpoint', 'ckpt-10.data-00000-of-00001', 'ckpt-10.index', 'ckpt-8.data-00000-of-00001', "
            "'ckpt-8.index', 'ckpt-9.data-00000-of-00001', 'ckpt-9.index']") in out
    lines = out.splitlines()
    zeros = lines.index("[0. 0. 0. 0. 0.]")
    assert lines[zeros + 1] != lines[zeros] and lines[zeros + 2] == "[[0. 0. 0. 0. 0.]]"
    assert lines[zeros + 3] != lines[zeros + 2]  # the deferred restore
    assert ("['_CHECKPOINTABLE_OBJECT_GRAPH', 'iterator/.ATTRIBUTES/ITERATOR_STATE', "
            "'net/l1/bias/.ATTRIBUTES/VARIABLE_VALUE', 'net/l1/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/"
            "VARIABLE_VALUE', 'net/l1/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE', "
            "'net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE'") in out
    assert "Shape: [1, 5]\nDtype: float32\narray([[" in out
    assert out.rstrip().endswith("ListWrapper([])")


def test_the_sparse_tensor_guide():
    out = run_program("guides", "sparse_tensor.py")
    assert out.startswith("SparseTensor(indices=kiln.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), "
                          "values=kiln.Tensor([10 20], shape=(2,), dtype=int32), dense_shape=kiln.Tensor([ 3 10], "
                          "shape=(2,), dtype=int64))\n<SparseTensor shape=[3, 10] \n values={\n  [0, 3]: 10\n"
                          "  [2, 4]: 20}>\n")
    assert "<SparseTensor shape=[3, 4] \n values={\n  [0, 0]: 1\n  [0, 3]: 8\n  [2, 2]: 3}>\n" in out  # from_dense
    assert "<SparseTensor shape=[4, 10] \n values={\n  [0, 2]: 87\n  [3, 0]: 38\n  [3, 4]: 2}>\n" in out  # add
    assert "[[ 78]\n [162]], shape=(2, 1), dtype=int32)" in out  # sparse_dense_matmul
    assert ("[[0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]\n [0 0 0 0 0 0 1 0 1 0 0 0 0 0 0 0 0]\n"
            " [0 0 0 0 1 1 0 0 0 1 1 0 0 0 0 0 0]\n [0 0 0 1 1 0 0 0 0 0 1 1 0 0 0 0 0]\n"
            " [0 0 0 1 1 0 0 0 0 0 1 1 0 0 0 0 0]\n [0 0 0 0 1 1 0 0 0 1 1 0 0 0 0 0 0]\n"
            " [0 0 0 0 0 0 1 0 1 0 0 0 0 0 0 0 0]\n [0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]], shape=(8, 17)") in out
    assert "[0 0 0 1 1]\n [0 0 0 0 1]\n [0 0 0 0 0]\n [0 0 0 0 0]], shape=(8, 5)" in out  # slice A
    assert "kiln.Tensor([], shape=(8, 0), dtype=int32)" in out  # slice C: past the edge
    assert out.count("[[ 6  0  0 13]\n [ 0  0  0  0]\n [ 0  0  8  0]], shape=(3, 4), dtype=int32)") == 2  # map_values
    # Keras on a sparse input: rows without values give the bias (zeros), as the guide's output shows
    zero = r"\[\s*0\.0*(?:e\+00)?\s*(?:,\s*0\.0*(?:e\+00)?\s*){3}\]"  # NumPy prints zeros by the other rows' scale
    assert re.search(rf"{zero},\n\s*{zero},\n\s*{zero},\n", out)
    # tf.data: from_tensor_slices, batch, unbatch, map (x * 2) of the SparseTensor
    rows = ["<SparseTensor shape=[4] \n values={{\n  [0]: {v}\n  [1]: {v}\n  [2]: {v}}}>\n",
            "<SparseTensor shape=[4] \n values={{}}>\n" * 3, "<SparseTensor shape=[4] \n values={{\n  [3]: {v}}}>\n",
            "<SparseTensor shape=[4] \n values={{\n  [0]: {v}\n  [1]: {v}}}>\n"]
    sliced = "".join(rows).format(v=1)
    batched = ("<SparseTensor shape=[2, 4] \n values={\n  [0, 0]: 1\n  [0, 1]: 1\n  [0, 2]: 1}>\n"
               "<SparseTensor shape=[2, 4] \n values={}>\n"
               "<SparseTensor shape=[2, 4] \n values={\n  [0, 3]: 1\n  [1, 0]: 1\n  [1, 1]: 1}>\n")
    assert sliced + batched + sliced + "".join(rows).format(v=2) in out
    assert "[[225   0   0]\n [  0   0   0]\n [  0   0 625]], shape=(3, 3), dtype=int32)" in out  # tf.function
    assert out.rstrip().endswith("kiln.Tensor(-3, shape=(), dtype=int32)\nkiln.Tensor(0, shape=(), dtype=int32)")


def test_the_ragged_tensor_guide():
    out = run_program("guides", "ragged_tensor.py")
    # Cell 39's sentence embeddings (hashed words and bigrams, embedding_lookup), 53-57's hashed words and the
    # Keras model they train, 86's .keras round trip.
    assert re.search(r"^ \[ ?-?\d\.\d+ +-?\d\.\d+ +-?\d\.\d+ +-?\d\.\d+\]\], shape=\(3, 4\), dtype=float32\)$", out, re.M)
    hashed = re.search(r"^\[\[(\d+(?:, \d+)*)\], \[(\d+(?:, \d+)*)\], \[(\d+(?:, \d+)*)\], \[(\d+(?:, \d+)*)\]\]$",
                       out, re.M)
    assert [len(g.split(", ")) for g in hashed.groups()] == [8, 6, 2, 4]  # words per sentence
    assert all(int(v) < 1000 for g in hashed.groups() for v in g.split(", "))
    assert "<kiln.Tensor: shape=(4, 8), dtype=int64, numpy=array([[" in out and out.count("Epoch 5/5") == 1
    assert re.search(r"^<kiln.Tensor: shape=\(4, 1\), dtype=float32, numpy=\n?array\(\[\[", out, re.M)
    assert out.startswith(
        "<kiln.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n"
        "kiln.Tensor([2.25              nan 5.33333333 6.                nan], shape=(5,), dtype=float64)\n"
        "<kiln.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]]>\n"
        "<kiln.RaggedTensor [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []]>\n"
        "<kiln.RaggedTensor [[b'So', b'lo'], [b'th', b'fo', b'al', b'th', b'fi']]>\n"
        "<kiln.RaggedTensor [[9, 1, 16, 1], [], [25, 81, 4], [36], []]>\n"  # tf.map_fn
        "kiln.Tensor([3 1 4 1], shape=(4,), dtype=int32)\n"
        "<kiln.RaggedTensor [[3, 1], [], [5, 9], [6], []]>\n<kiln.RaggedTensor [[4, 1], [], [9, 2], [6], []]>\n"
        "<kiln.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n"
        "<kiln.RaggedTensor [[4, 3, 7, 5], [], [10, 15, 9], [14], []]>\n"
        "<kiln.RaggedTensor [[7, 3, 9, 3], [], [11, 19, 5], [13], []]>\n"
        "[[3, 1, 4, 1], [], [5, 9, 2], [6], []]\n")
    assert out.count("<kiln.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n") == 4  # the factories, from_tensor
    assert "<kiln.RaggedTensor [[b'Hi'], [b'How', b'are', b'you']]>\n<kiln.RaggedTensor [[[1, 2], [3]], [[4, 5]]]>\n" \
        in out
    assert "all scalar values must have the same nesting depth\nkiln.Tensor(\n[[" in out  # then cell 39's embeddings
    assert "shape=(3, 4), dtype=float32)\nTensorShape([2, None])\nkiln.Tensor([2 3], shape=(2,), dtype=int64)\n" in out
    assert ("<kiln.RaggedTensor [[b'John', b'fell', b'asleep'], [b'a', b'big', b'dog', b'barked'],\n"
            " [b'my', b'cat', b'is', b'fuzzy']]>\n") in out  # tf.concat(axis=1)
    assert "[[b'John' b'' b'' b'fell' b'asleep']\n [b'a' b'big' b'dog' b'barked' b'']\n" in out  # tf.sparse.concat
    # tf.io.RaggedFeature and tf.data: from_tensor_slices, batch, unbatch, dense_to_ragged_batch, map
    assert ("colors=<kiln.RaggedTensor [[b'red', b'blue'], [b'orange'], [b'black', b'yellow'], [b'green']]>\n"
            "lengths=<kiln.RaggedTensor [[7], [], [1, 3], [3, 5, 2]]>\n") in out
    sliced = ("Element 0:\n        colors = [b'red' b'blue']\n       lengths = [7]\n"
              "Element 1:\n        colors = [b'orange']\n       lengths = []\n"
              "Element 2:\n        colors = [b'black' b'yellow']\n       lengths = [1 3]\n"
              "Element 3:\n        colors = [b'green']\n       lengths = [3 5 2]\n")
    batched = ("Element 0:\n        colors = <kiln.RaggedTensor [[b'red', b'blue'], [b'orange']]>\n"
               "       lengths = <kiln.RaggedTensor [[7], []]>\n"
               "Element 1:\n        colors = <kiln.RaggedTensor [[b'black', b'yellow'], [b'green']]>\n"
               "       lengths = <kiln.RaggedTensor [[1, 3], [3, 5, 2]]>\n")
    assert sliced + batched + sliced in out
    assert ("<kiln.RaggedTensor [[0], [0, 1, 2, 3, 4]]>\n<kiln.RaggedTensor [[0, 1, 2], [0, 1]]>\n"
            "<kiln.RaggedTensor [[0, 1, 2, 3, 4, 5, 6, 7]]>\n") in out
    assert ("Element 0:\n   mean_length = 7\n length_ranges = <kiln.RaggedTensor [[0, 1, 2, 3, 4, 5, 6]]>\n"
            "Element 1:\n   mean_length = 0\n length_ranges = <kiln.RaggedTensor []>\n"
            "Element 2:\n   mean_length = 2\n length_ranges = <kiln.RaggedTensor [[0], [0, 1, 2]]>\n"
            "Element 3:\n   mean_length = 3\n length_ranges = <kiln.RaggedTensor [[0, 1, 2], [0, 1, 2, 3, 4], "
            "[0, 1]]>\n") in out
    # tf.function: a ragged argument, a RaggedTensorSpec signature, a concrete function
    assert "<kiln.RaggedTensor [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]>\n" in out
    # tf.shape of a ragged tensor: DynamicRaggedShape
    assert ("<kiln.Tensor: shape=(2,), dtype=int32, numpy=array([3, 2], dtype=int32)>\n"
            "<DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>\n"
            "tf.reshape(x, rt_shape) = <kiln.RaggedTensor [[b'a'], [b'b', b'c', b'd'], [], [b'e', b'f']]>\n"
            "tf.zeros(rt_shape) = <kiln.RaggedTensor [[0.0], [0.0, 0.0, 0.0], [], [0.0, 0.0]]>\n"
            "tf.ones(rt_shape) = <kiln.RaggedTensor [[1.0], [1.0, 1.0, 1.0], [], [1.0, 1.0]]>\n"
            "tf.fill(rt_shape, 9) = <kiln.RaggedTensor [[b'x'], [b'x', b'x', b'x'], [], [b'x', b'x']]>\n"
            "<kiln.Tensor: shape=(), dtype=int32, numpy=4>\n"
            "Got expected ValueError: Index 1 is not uniform\n"
            "<DynamicRaggedShape lengths=[4] num_row_partitions=0>\n"
            "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>\n"
            "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>\n") in out
    assert "numpy=array([2, 3, 6], dtype=int32)>, <kiln.Tensor: shape=(3,), dtype=int32, numpy=array([1, 3, 4]" in out
    # the concrete function, a SavedModel's restored function called with a ragged tensor, then operators
    assert "<kiln.RaggedTensor [[2, 3], [4], [5, 6, 7]]>\n<kiln.Tensor: shape=(4, 1)" in out  # then cell 86's model
    assert ("]], dtype=float32)>\n<kiln.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>\n"
            "<kiln.RaggedTensor [[2, 3], [5], [7, 8, 9]]>\n") in out
    # indexing
    assert ("<kiln.RaggedTensor [[b'Who', b'is', b'George'], [b'What', b'is', b'the'], [b'Goodnight']]>\n"
            "<kiln.RaggedTensor [[b'George', b'Washington'], [b'weather', b'tomorrow'], [b'Goodnight']]>\n"
            "<kiln.RaggedTensor [[5], [], [6]]>\nkiln.Tensor([8 9], shape=(2,), dtype=int32)\n"
            "<kiln.RaggedTensor [[[4]], [[], [6]], [], [[10]]]>\n") in out
    assert "<kiln.RaggedTensor [[1, 3], [2], [4, 5, 8, 9]]>\n" in out  # from_tensor(padding=-1)
    assert "<kiln.RaggedTensor [[b'a'], [], [b'b', b'c']]>\n" in out  # from_sparse
    assert ("Python list: [[1, 2], [3, 4, 5], [6], [], [7]]\nNumPy array: [array([1, 2], dtype=int32) "
            "array([3, 4, 5], dtype=int32)\n array([6], dtype=int32) array([], dtype=int32) array([7], dtype=int32)]\n"
            "Values: [1 2 3 4 5 6 7]\nSplits: [0 2 5 6 6 7]\nIndexed value: [3 4 5]\n") in out
    # broadcasting and its errors
    assert "<kiln.RaggedTensor [[1010, 1087, 1012], [2019, 2053], [3012, 3032]]>\n" in out
    assert "<kiln.RaggedTensor [[[11, 12],\n  [13, 14],\n  [15, 16]], [[17, 18]]]>\n" in out
    assert "[[[[11, 21, 31],\n   [12, 22, 32]], [], [[13, 23, 33]], [[14, 24, 34]]],\n" in out
    assert "Unable to broadcast: dimension size mismatch in dimension 1" in out
    assert out.count("Inputs must have identical ragged splits") == 2
    # encoding
    assert out.count("<kiln.RaggedTensor [[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]]>\n") == 2
    assert "Shape: (3, None, None)\nNumber of partitioned dimensions: 2\n" in out
    assert "TensorShape([2, None, None, None])\n3\n" in out
    assert "Shape: (3, None, 2)\nNumber of partitioned dimensions: 1\nFlat values shape: (6, 2)\n" in out
    assert out.rstrip().endswith("<kiln.RaggedTensor [[[10, 11, 12], [13, 14]],\n [[15, 16, 17, 18], [19]]]>\n"
                                 "Shape: (2, 2, None)\nNumber of partitioned dimensions: 2")  # from_uniform_row_length


def test_the_unicode_guide():
    out = run_program("guides", "unicode.py")
    assert out.startswith("<kiln.Tensor: shape=(), dtype=string, numpy=b'Thanks \\xf0\\x9f\\x98\\x8a'>\n"
                          "TensorShape([2])\n")
    chars = "numpy=array([35821, 35328, 22788, 29702], dtype=int32)>"
    assert out.count(chars) == 2  # the code points, and unicode_decode of the UTF-8 scalar
    utf16 = "numpy=b'\\x8b\\xed\\x8a\\x00Y\\x04t\\x06'>"
    assert out.count(utf16) == 2  # the UTF-16-BE constant and unicode_transcode's result
    assert ("[104, 195, 108, 108, 111]\n[87, 104, 97, 116, 32, 105, 115, 32, 116, 104, 101, 32, 119, 101, 97, 116, "
            "104, 101, 114, 32, 116, 111, 109, 111, 114, 114, 111, 119]\n[71, 246, 246, 100, 110, 105, 103, 104, 116]\n"
            "[128522]\n") in out
    assert "[128522,      _,      _," in out  # the sparse form, printed by the guide's own loop
    assert "numpy=array([b'cat', b'dog', b'cow'], dtype=object)>" in out
    batch = ("numpy=array([b'h\\xc3\\x83llo', b'What is the weather tomorrow',\n"
             "       b'G\\xc3\\xb6\\xc3\\xb6dnight', b'\\xf0\\x9f\\x98\\x8a'], dtype=object)>")
    assert out.count(batch) == 3  # from the ragged, the sparse and the padded code points
    assert "11 bytes; 8 UTF-8 characters\nb'\\xf0'\nb'\\xf0\\x9f\\x98\\x8a'\n" in out
    assert "array([b'T', b'h', b'a', b'n', b'k', b's', b' ', b'\\xf0\\x9f\\x98\\x8a'],\n      dtype=object)" in out
    assert ("At byte offset 0: codepoint 127880\nAt byte offset 4: codepoint 127881\n"
            "At byte offset 8: codepoint 127882\n[17  8]\n") in out  # [USCRIPT_HAN, USCRIPT_CYRILLIC]
    assert "[[25, 25, 25, 25, 25, 0, 0, 25, 25, 25, 25, 25, 0],\n [17, 17, 20, 20, 20, 20, 20]]>" in out
    assert "kiln.Tensor([ 0  5  7 12 13 15], shape=(6,), dtype=int64)" in out
    assert out.endswith("[[b'Hello', b', ', b'world', b'.'], [b'\\xe4\\xb8\\x96\\xe7\\x95\\x8c', "
                        "b'\\xe3\\x81\\x93\\xe3\\x82\\x93\\xe3\\x81\\xab\\xe3\\x81\\xa1\\xe3\\x81\\xaf']]\n")


def test_the_basics_guide():
    out = run_program("guides", "basics.py")
    assert out.startswith("kiln.Tensor(\n[[1. 2. 3.]\n [4. 5. 6.]], shape=(2, 3), dtype=float32)\n(2, 3)\n"
                          "<dtype: 'float32'>\n")
    assert "numpy=array([[14., 32.],\n       [32., 77.]], dtype=float32)>" in out  # x @ tf.transpose(x)
    assert "numpy=array([[0.09003057, 0.24472848, 0.66524094],\n       [0.09003057, 0.24472848, 0.66524094]]" in out
    assert "numpy=21.0>" in out and "TensorFlow **IS NOT** using the GPU" in out
    assert "numpy=array([2., 3., 4.], dtype=float32)>" in out  # var.assign_add
    assert "numpy=-2.0>\n<kiln.Tensor: shape=(), dtype=float32, numpy=4.0>" in out  # f(1.0) and its derivative
    assert "Tracing.\n\n<kiln.Tensor: shape=(), dtype=int32, numpy=6>\n<kiln.Tensor: shape=(), dtype=int32, " \
           "numpy=27>\nTracing.\n\n<kiln.Tensor: shape=(), dtype=float32, numpy=27.300001>" in out  # one trace each
    errors = [float(v) for v in re.findall(r"^Mean squared error for step \d+: ([\d.]+)$", out, re.M)]
    assert len(errors) == 10 and errors[-1] < errors[0] / 10


def test_the_basic_training_loops_guide():
    out = run_program("guides", "basic_training_loops.py")
    assert out.startswith("Variables: (<kiln.Variable 'Variable:0' shape=() dtype=float32, numpy=0.0>, "
                          "<kiln.Variable 'Variable:0' shape=() dtype=float32, numpy=5.0>)\n")
    final = re.findall(r"^Epoch  9:\n     W = ([\d.]+), b = ([\d.]+), loss=([\d.]+)$", out, re.M)
    assert len(final) == 2 and final[0] == final[1]  # the eager loop and the same loop again agree
    w, b, loss = (float(v) for v in final[0])
    assert 2.8 < w < 3.4 and 1.4 < b < 2.1 and loss < 1.5  # towards TRUE_W = 3.0, TRUE_B = 2.0 (noise 1.0)
    assert out.count("Epoch 10/10") == 1  # the Keras version's fit


def test_the_tensor_slicing_guide():
    out = run_program("guides", "tensor_slicing.py")
    assert out.startswith("kiln.Tensor([1 2 3], shape=(3,), dtype=int32)\n" * 2 +
                          "kiln.Tensor([5 6 7], shape=(3,), dtype=int32)\n")
    assert "kiln.Tensor([b'c' b'a' b't' b's'], shape=(4,), dtype=string)" in out
    assert "kiln.Tensor([ 0 16], shape=(2,), dtype=int64)" in out
    assert "kiln.Tensor([ 0  2  0  4  0  6  0  8  0 10], shape=(10,), dtype=int32)" in out
    assert "[[1 0 0]\n [0 1 0]\n [0 0 1]], shape=(3, 3), dtype=int32)" in out  # tensor_scatter_nd_sub
    assert out.endswith("[[-2 -7 -6]\n [-9 -5  1]\n [-4 -3 -8]], shape=(3, 3), dtype=int32)\n"  # ..._min
                        "kiln.Tensor(\n[[-2 -7  6]\n [-9  5  1]\n [ 4 -3 -8]], shape=(3, 3), dtype=int32)\n")  # ..._max


def test_the_random_numbers_guide():
    """Kiln's numbers are not TF's (docs/design-notes.md): the reproducibility the guide shows is asserted."""
    out = run_program("guides", "random_numbers.py")
    scalars = re.findall(r"^kiln\.Tensor\((-?[\d.e+-]+), shape=\(\), dtype=float32\)$", out, re.M)
    matrices = re.findall(r"^kiln\.Tensor\(\n(\[\[.*?\]\]), shape=\(2, 3\), dtype=float32\)$", out, re.M | re.S)
    assert len(matrices) == 6 and len(scalars) == 17
    assert matrices[0] == matrices[2]  # from_seed(1) and from_seed(1, alg='philox'): one stream
    assert matrices[0] != matrices[1] and matrices[0] != matrices[3]  # the global and a non-deterministic one
    assert matrices[4] == matrices[5]  # stateless_normal: the same seed, the same numbers
    reset = scalars[0:3]  # g.normal twice, reset_from_seed(1), g.normal
    assert reset[0] == reset[2] != reset[1]
    split = scalars[3:8]  # g.normal, three split generators, g.normal again
    assert split[0] == reset[0] and len(set(split)) == 5
    traced = scalars[9:12]  # tf.function: a generator made outside, then one made on the first trace (twice)
    assert traced[0] == reset[0] and traced[1:] == reset[:2]
    assert "\n2\n1\n" in out  # generators as arguments retrace (two traces); variables of one spec do not
    saved = re.search(r"RNG stream from saving point:\n(.*?)\nRNG stream from restoring point:\n(.*?)\n"
                      r"(?=kiln\.Tensor\(\n)", out, re.S)
    assert saved and saved.group(1) == saved.group(2)  # the checkpoint restores the generator's state


def test_the_mixed_precision_guide(tmp_path):
    # Synthetic digits of MNIST's sizes: the guide reshapes to (60000, 784) and (10000, 784).
    mnist_dir = synthetic_mnist(str(tmp_path / "mnist"), train=60000, test=10000)
    out = without_progress(run_example("guides", "mixed_precision.py", env={"KILN_MNIST_DIR": mnist_dir},
                                       timeout=900))
    assert "\nCompute dtype: float16\nVariable dtype: float32\n" in out  # after Keras' warning (below)
    assert "The model will run with 64 units on a CPU\n" in out
    assert ('<Policy "mixed_float16">\nx.dtype: float16\ndense1.kernel.dtype: float32\nOutputs dtype: float16\n'
            "Outputs dtype: float32\n") in out
    assert "Mixed precision compatibility check (mixed_float16): WARNING" in out  # Keras' CPU warning, once
    assert out.count("Mixed precision compatibility check") == 1
    # fit: 48000 training digits in batches of 8192 (6 steps), validation on the other 12000.
    epochs = re.findall(r"^6/6 \[=+\] - .* - loss: ([\d.]+) - accuracy: ([\d.]+) - val_loss: ([\d.]+) - "
                        r"val_accuracy: ([\d.]+)$", out, re.M)
    assert len(epochs) == 5 and float(epochs[-1][0]) < float(epochs[0][0])
    assert float(re.search(r"^Test accuracy: ([\d.]+)$", out, re.M).group(1)) > 0.9
    assert "\ninf\n0.0\n" in out  # float16 overflow and underflow, as the notebook shows them
    custom = re.findall(r"^Epoch (\d): loss=([\d.]+), test accuracy=([\d.]+)$", out, re.M)
    assert [e[0] for e in custom] == ["0", "1", "2", "3", "4"]
    assert float(custom[-1][1]) < float(custom[0][1]) and float(custom[-1][2]) > 0.9


def test_the_data_performance_guide():
    # Its pipelines sleep to stand for work, so the figures are the machine's: each benchmark prints one
    # "Execution time" (naive, prefetch, interleave, parallel interleave, map, parallel map, cache, scalar and
    # vectorized map, the naive and optimized timelines); the timelines then index with boolean masks and plot.
    out = run_program("guides", "data_performance.py")
    assert len(re.findall(r"^Execution time: [\d.]+$", out, re.M)) == 11, out


def test_the_tf_numpy_guide():
    out = run_program("guides", "tf_numpy.py")
    assert ("Created ND array with shape = (5, 3), rank = 2, dtype = <dtype: 'float32'> on device = "
            "/job:localhost/replica:0/task:0/device:CPU:0\n\nIs `ones` an instance of tf.Tensor: True\n\n"
            "ndarray.T has shape (3, 5)\nnarray.reshape(-1) has shape (15,)\n") in out
    # NumPy's promotion, as the guide shows it.
    assert ("int32 + int64 => int64\nint32 + float32 => float64\nint32 + float64 => float64\n"
            "int64 + float32 => float64\nint64 + float64 => float64\nfloat32 + float64 => float64\n") in out
    assert "tnp.asarray(1).dtype == tnp.int64\ntnp.asarray(1.).dtype == tnp.float64\n" in out
    assert ("When prefer_float32 is True:\ntnp.asarray(1.).dtype == tnp.float32\ntnp.add(1., 2.).dtype == tnp.float32\n"
            "When prefer_float32 is False:\ntnp.asarray(1.).dtype == tnp.float64\n"
            "tnp.add(1., 2.).dtype == tnp.float64\n") in out
    assert "Broadcasting shapes (2, 3), (3,) and (1, 2, 1) gives shape (1, 2, 3)\n" in out
    # Basic, boolean and advanced indexing of arange(24).reshape(2, 3, 4).
    assert "[[[16 17 18 19]\n  [20 21 22 23]]], shape=(1, 2, 4), dtype=int64)" in out
    assert ("[[[ 0  1  2  3]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [20 21 22 23]]], shape=(2, 2, 4), "
            "dtype=int64)") in out
    assert "Tensor([12 13 17], shape=(3,), dtype=int64)\n" in out
    assert "Currently, TensorFlow NumPy does not support mutation.\n" in out
    rows = re.search(r"^\[\[(.+)\]\n \[(.+)\]\], shape=\(2, 2\), dtype=float32\)$", out, re.M)
    assert rows and rows.group(1) == rows.group(2)  # model.predict of two equal inputs
    assert "sum = 6.0. Class: <class 'numpy.float64'>\nsum = 6.0. Class: <class 'kiln._C.Tensor'>\n" in out
    assert "x = kiln.Tensor([2. 2.], shape=(2,), dtype=float64)\n" in out
    assert "[1 2] <class 'numpy.ndarray'>\n" in out
    assert "Output = kiln.Tensor(6.0, shape=(), dtype=float32)\n" * 2 in out
    assert ("Parameter shapes: [TensorShape([32, 64]), TensorShape([64]), TensorShape([64, 2])]\n"
            "Gradient shapes: [TensorShape([32, 64]), TensorShape([64]), TensorShape([64, 2])]\n") in out
    assert "Output shape: (16, 2), input shape: (16, 32)\nBatch jacobian shape: (16, 2, 32)\n" in out
    assert len(re.findall(r"^[\d.]+ ms$", out, re.M)) == 4  # the timings, whatever they are on this CPU
    for shape in ("(128, 32, 64)", "(128, 64)", "(128, 64, 2)"):
        assert f"batch size: 128, per example gradient shape: {shape} \n" in out
    assert "Using device: /device:CPU:0\nprediction is placed on /job:localhost/replica:0/task:0/device:CPU:0\n" in out
