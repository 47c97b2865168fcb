"""TensorFlow's guide "Unicode strings" (tensorflow/text, docs/guide/unicode.ipynb @17c38bf), run on Kiln: the
guide's code cells in order, only the import changed (`import kiln as tf`); a cell's last bare expression, which
the notebook displays, is printed (marked "Kiln:").

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/unicode.py"""

# ---- cell 4
import kiln as tf
import numpy as np

# ---- cell 6
print(repr(tf.constant(u"Thanks 😊")))  # Kiln: printed, as the notebook displays it

# ---- cell 8
print(repr(tf.constant([u"You're", u"welcome!"]).shape))  # Kiln: printed, as the notebook displays it

# ---- cell 11
# Unicode string, represented as a UTF-8 encoded string scalar.
text_utf8 = tf.constant(u"语言处理")
print(repr(text_utf8))  # Kiln: printed, as the notebook displays it

# ---- cell 12
# Unicode string, represented as a UTF-16-BE encoded string scalar.
text_utf16be = tf.constant(u"语言处理".encode("UTF-16-BE"))
print(repr(text_utf16be))  # Kiln: printed, as the notebook displays it

# ---- cell 13
# Unicode string, represented as a vector of Unicode code points.
text_chars = tf.constant([ord(char) for char in u"语言处理"])
print(repr(text_chars))  # Kiln: printed, as the notebook displays it

# ---- cell 15
print(repr(tf.strings.unicode_decode(text_utf8,
                          input_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 16
print(repr(tf.strings.unicode_encode(text_chars,
                          output_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 17
print(repr(tf.strings.unicode_transcode(text_utf8,
                             input_encoding='UTF8',
                             output_encoding='UTF-16-BE')))  # Kiln: printed, as the notebook displays it

# ---- cell 19
# A batch of Unicode strings, each represented as a UTF8-encoded string.
batch_utf8 = [s.encode('UTF-8') for s in
              [u'hÃllo', u'What is the weather tomorrow', u'Göödnight', u'😊']]
batch_chars_ragged = tf.strings.unicode_decode(batch_utf8,
                                               input_encoding='UTF-8')
for sentence_chars in batch_chars_ragged.to_list():
  print(sentence_chars)

# ---- cell 21
batch_chars_padded = batch_chars_ragged.to_tensor(default_value=-1)
print(batch_chars_padded.numpy())

# ---- cell 22
batch_chars_sparse = batch_chars_ragged.to_sparse()

nrows, ncols = batch_chars_sparse.dense_shape.numpy()
elements = [['_' for i in range(ncols)] for j in range(nrows)]
for (row, col), value in zip(batch_chars_sparse.indices.numpy(), batch_chars_sparse.values.numpy()):
  elements[row][col] = str(value)
# max_width = max(len(value) for row in elements for value in row)
value_lengths = []
for row in elements:
  for value in row:
    value_lengths.append(len(value))
max_width = max(value_lengths)
print('[%s]' % '\n '.join(
    '[%s]' % ', '.join(value.rjust(max_width) for value in row)
    for row in elements))

# ---- cell 24
print(repr(tf.strings.unicode_encode([[99, 97, 116], [100, 111, 103], [99, 111, 119]],
                          output_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 26
print(repr(tf.strings.unicode_encode(batch_chars_ragged, output_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 28
print(repr(tf.strings.unicode_encode(
    tf.RaggedTensor.from_sparse(batch_chars_sparse),
    output_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 29
print(repr(tf.strings.unicode_encode(
    tf.RaggedTensor.from_tensor(batch_chars_padded, padding=-1),
    output_encoding='UTF-8')))  # Kiln: printed, as the notebook displays it

# ---- cell 32
# Note that the final character takes up 4 bytes in UTF8.
thanks = u'Thanks 😊'.encode('UTF-8')
num_bytes = tf.strings.length(thanks).numpy()
num_chars = tf.strings.length(thanks, unit='UTF8_CHAR').numpy()
print('{} bytes; {} UTF-8 characters'.format(num_bytes, num_chars))

# ---- cell 34
# Here, unit='BYTE' (default). Returns a single byte with len=1
print(repr(tf.strings.substr(thanks, pos=7, len=1).numpy()))  # Kiln: printed, as the notebook displays it

# ---- cell 35
# Specifying unit='UTF8_CHAR', returns a single 4 byte character in this case
print(tf.strings.substr(thanks, pos=7, len=1, unit='UTF8_CHAR').numpy())

# ---- cell 37
print(repr(tf.strings.unicode_split(thanks, 'UTF-8').numpy()))  # Kiln: printed, as the notebook displays it

# ---- cell 39
codepoints, offsets = tf.strings.unicode_decode_with_offsets(u'🎈🎉🎊', 'UTF-8')

for (codepoint, offset) in zip(codepoints.numpy(), offsets.numpy()):
  print('At byte offset {}: codepoint {}'.format(offset, codepoint))

# ---- cell 42
uscript = tf.strings.unicode_script([33464, 1041])  # ['芸', 'Б']

print(uscript.numpy())  # [17, 8] == [USCRIPT_HAN, USCRIPT_CYRILLIC]

# ---- cell 44
print(tf.strings.unicode_script(batch_chars_ragged))

# ---- cell 46
# dtype: string; shape: [num_sentences]
#
# The sentences to process.  Edit this line to try out different inputs!
sentence_texts = [u'Hello, world.', u'世界こんにちは']

# ---- cell 48
# dtype: int32; shape: [num_sentences, (num_chars_per_sentence)]
#
# sentence_char_codepoint[i, j] is the codepoint for the j'th character in
# the i'th sentence.
sentence_char_codepoint = tf.strings.unicode_decode(sentence_texts, 'UTF-8')
print(sentence_char_codepoint)

# dtype: int32; shape: [num_sentences, (num_chars_per_sentence)]
#
# sentence_char_scripts[i, j] is the Unicode script of the j'th character in
# the i'th sentence.
sentence_char_script = tf.strings.unicode_script(sentence_char_codepoint)
print(sentence_char_script)

# ---- cell 50
# dtype: bool; shape: [num_sentences, (num_chars_per_sentence)]
#
# sentence_char_starts_word[i, j] is True if the j'th character in the i'th
# sentence is the start of a word.
sentence_char_starts_word = tf.concat(
    [tf.fill([sentence_char_script.nrows(), 1], True),
     tf.not_equal(sentence_char_script[:, 1:], sentence_char_script[:, :-1])],
    axis=1)

# dtype: int64; shape: [num_words]
#
# word_starts[i] is the index of the character that starts the i'th word (in
# the flattened list of characters from all sentences).
word_starts = tf.squeeze(tf.where(sentence_char_starts_word.values), axis=1)
print(word_starts)

# ---- cell 52
# dtype: int32; shape: [num_words, (num_chars_per_word)]
#
# word_char_codepoint[i, j] is the codepoint for the j'th character in the
# i'th word.
word_char_codepoint = tf.RaggedTensor.from_row_starts(
    values=sentence_char_codepoint.values,
    row_starts=word_starts)
print(word_char_codepoint)

# ---- cell 54
# dtype: int64; shape: [num_sentences]
#
# sentence_num_words[i] is the number of words in the i'th sentence.
sentence_num_words = tf.reduce_sum(
    tf.cast(sentence_char_starts_word, tf.int64),
    axis=1)

# dtype: int32; shape: [num_sentences, (num_words_per_sentence), (num_chars_per_word)]
#
# sentence_word_char_codepoint[i, j, k] is the codepoint for the k'th character
# in the j'th word in the i'th sentence.
sentence_word_char_codepoint = tf.RaggedTensor.from_row_lengths(
    values=word_char_codepoint,
    row_lengths=sentence_num_words)
print(sentence_word_char_codepoint)

print(repr(tf.strings.unicode_encode(sentence_word_char_codepoint, 'UTF-8').to_list()))  # Kiln: printed, as the notebook displays it
