"""tf.data's text sources: TextLineDataset, CsvDataset and make_csv_dataset (quotes,
defaults, select_cols, header, compression), against TF's documented outputs."""
import gzip

import pytest

import kiln as tf


def item(t):
    value = t.numpy()
    return value if isinstance(value, bytes) else value.item()


def write(path, text, compress=None):
    data = text.encode()
    if compress == "GZIP":
        data = gzip.compress(data)
    path.write_bytes(data)
    return str(path)


def test_text_lines_without_their_ends(tmp_path):
    a = write(tmp_path / "a.txt", "first\nsecond\r\n\nlast without newline")
    b = write(tmp_path / "b.txt", "")
    c = write(tmp_path / "c.txt.gz", "zipped\n", "GZIP")
    lines = [x.numpy() for x in tf.data.TextLineDataset([a, b])]
    assert lines == [b"first", b"second", b"", b"last without newline"]
    assert [x.numpy() for x in tf.data.TextLineDataset(c, compression_type="GZIP")] == [b"zipped"]
    ds = tf.data.TextLineDataset(a)
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    # The guide's skip-the-header idiom, and a filter on the lines.
    kept = tf.data.TextLineDataset(a).skip(1).filter(lambda line: tf.not_equal(line, ""))
    assert [x.numpy() for x in kept] == [b"second", b"last without newline"]


def test_csv_dataset_from_tf_s_docstring(tmp_path):
    path = write(tmp_path / "my_file0.csv", "abcdefg,4.28E10,5.55E6,12\nhijklmn,-5.3E14,,2\n")
    ds = tf.data.experimental.CsvDataset(
        path, [tf.float32, tf.constant([0.0], dtype=tf.float32), tf.int32], select_cols=[1, 2, 3])
    out = [tuple(item(t) for t in e) for e in ds]
    assert out == [(pytest.approx(4.28e10), pytest.approx(5.55e6), 12), (pytest.approx(-5.3e14), 0.0, 2)]
    assert ds.element_spec == (tf.TensorSpec([], tf.float32),) * 2 + (tf.TensorSpec([], tf.int32),)


def test_csv_quotes_defaults_header_and_na(tmp_path):
    path = write(tmp_path / "q.csv", 'name,score,note\n"Smith, J",1.5,"said ""hi"""\nDoe,NA,"two\nlines"\n,3,\n')
    ds = tf.data.experimental.CsvDataset(path, [tf.constant(["?"]), [0.0], tf.string], header=True, na_value="NA")
    # The last record's note is required (a dtype) and empty.
    it = iter(ds)
    assert [tuple(item(t) for t in next(it)) for _ in range(2)] == [
        (b"Smith, J", 1.5, b'said "hi"'), (b"Doe", 0.0, b"two\nlines")]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 2 is required but missing in record!"):
        next(it)
    optional = tf.data.experimental.CsvDataset(path, [[b"?"], [0.0], [b"-"]], header=True, na_value="NA")
    assert [tuple(item(t) for t in e) for e in optional][2] == (b"?", 3.0, b"-")
    plain = write(tmp_path / "p.csv", 'a;"b"\n')
    raw = tf.data.experimental.CsvDataset(plain, [tf.string, tf.string], field_delim=";", use_quote_delim=False)
    assert [tuple(t.numpy() for t in e) for e in raw] == [(b"a", b'"b"')]


def test_csv_errors(tmp_path):
    path = write(tmp_path / "e.csv", "1,2\n3,x\n4\n")
    ds = tf.data.experimental.CsvDataset(path, [tf.int32, tf.int32])
    it = iter(ds)
    assert [int(t) for t in next(it)] == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 in record is not a valid int32: x"):
        next(it)
    short = write(tmp_path / "s.csv", "1,2\n4\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 1 in record"):
        list(tf.data.experimental.CsvDataset(short, [tf.int32, [0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="strictly increasing"):
        tf.data.experimental.CsvDataset(path, [tf.int32, tf.int32], select_cols=[1, 0])
    for text, message in (('"a"b,1\n', "Quote inside a string has to be escaped by another quote"),
                          ('"open,1\n', "Reached end of file without closing quoted field")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            list(tf.data.experimental.CsvDataset(write(tmp_path / "quotes.csv", text), [tf.string, tf.int32]))
    blank = write(tmp_path / "blank.csv", "1,2\n\n3,4\n")  # TF reads a blank line as one empty field
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 1 in record"):
        list(tf.data.experimental.CsvDataset(blank, [tf.int32, tf.int32]))
    single = write(tmp_path / "single.csv", "1\n\n3\n")
    assert [int(e[0]) for e in tf.data.experimental.CsvDataset(single, [[-1]])] == [1, -1, 3]
    with pytest.raises(TypeError, match="CSV columns are"):
        tf.data.experimental.CsvDataset(path, [tf.bool])


def test_make_csv_dataset_as_in_the_load_csv_tutorial(tmp_path):
    path = write(tmp_path / "titanic.csv", "survived,sex,age,fare\n0,male,22.0,7.25\n1,female,38.0,71.28\n"
                                           "1,female,26.0,7.92\n")
    ds = tf.data.experimental.make_csv_dataset(path, batch_size=2, label_name="survived", num_epochs=1,
                                               shuffle=False)
    batches = list(ds)
    features, labels = batches[0]
    # TF gives an OrderedDict in the file's column order; Kiln's map returns a dict of the same items.
    assert isinstance(features, dict) and sorted(features) == ["age", "fare", "sex"]
    assert labels.numpy().tolist() == [0, 1] and labels.dtype == tf.int32
    assert features["sex"].numpy().tolist() == [b"male", b"female"]
    assert features["age"].dtype == tf.float32
    assert features["fare"].numpy().tolist() == pytest.approx([7.25, 71.28])
    assert batches[1][1].numpy().tolist() == [1]
    picked = tf.data.experimental.make_csv_dataset(path, batch_size=3, select_columns=["age", "sex"], num_epochs=1,
                                                   shuffle=False)
    only = next(iter(picked))
    assert sorted(only) == ["age", "sex"] and only["age"].numpy().tolist() == [22.0, 38.0, 26.0]
    endless = tf.data.experimental.make_csv_dataset(path, batch_size=2, shuffle=True, shuffle_seed=1,
                                                   shuffle_buffer_size=8)
    assert len(list(endless.take(5))) == 5  # num_epochs=None repeats forever


def test_readers_inside_a_function(tmp_path):
    path = write(tmp_path / "n.csv", "1,2.5\n2,3.5\n")
    ds = tf.data.experimental.CsvDataset(path, [tf.int64, tf.float32])

    @tf.function
    def total(ds):
        s = tf.constant(0.0)
        for i, x in ds:
            s += tf.cast(i, tf.float32) * x
        return s

    assert float(total(ds)) == 1 * 2.5 + 2 * 3.5
    assert float(total(ds)) == 9.5
