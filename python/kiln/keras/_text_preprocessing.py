"""keras.preprocessing.text (Keras 2.15's legacy text utilities, still in many tutorials): text_to_word_sequence,
one_hot / hashing_trick, and Tokenizer (word counts, the index by frequency, texts <-> sequences, the bag-of-words
matrices, JSON round trip), with Keras' rules and defaults. Plain Python and NumPy, as in Keras."""
import collections
import hashlib
import json
import warnings

import numpy as np

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=_FILTERS, lower=True, split=" "):
    """The words of a text: lower-cased, each filter character made a separator, split, empty words dropped."""
    if lower:
        input_text = input_text.lower()
    translated = input_text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in translated.split(split) if word]


def hashing_trick(text, n, hash_function=None, filters=_FILTERS, lower=True, split=" ", analyzer=None):
    """Each word's hash mod (n - 1), plus 1 (0 is never an index); hash_function None: Python's hash (salted per
    process unless PYTHONHASHSEED is set, as in Keras), "md5": a stable one."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = text_to_word_sequence(text, filters=filters, lower=lower, split=split) if analyzer is None \
        else analyzer(text)
    return [(hash_function(w) % (n - 1) + 1) for w in words]


def one_hot(input_text, n, filters=_FILTERS, lower=True, split=" ", analyzer=None):
    """hashing_trick with Python's hash (not a one-hot encoding, despite the name)."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower, split=split,
                         analyzer=analyzer)


class Tokenizer:
    """Words -> integer indices, the most frequent word first (index 1; 0 is reserved), with an optional
    out-of-vocabulary token at index 1; num_words keeps the num_words - 1 most frequent in the outputs."""

    def __init__(self, num_words=None, filters=_FILTERS, lower=True, split=" ", char_level=False, oov_token=None,
                 analyzer=None, **kwargs):
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed `num_words`.")
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError("Unrecognized keyword arguments: " + str(kwargs))
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs = collections.defaultdict(int)
        self.word_index, self.index_word = {}, {}

    def _sequence(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        if self.analyzer is None:
            return text_to_word_sequence(text, filters=self.filters, lower=self.lower, split=self.split)
        return self.analyzer(text)

    def fit_on_texts(self, texts):
        """Counts the words of each text (and the texts holding each), then indexes them by frequency."""
        for text in texts:
            self.document_count += 1
            seq = self._sequence(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        counts = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)  # stable: ties in order
        vocabulary = ([self.oov_token] if self.oov_token is not None else []) + [w for w, _ in counts]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {c: w for w, c in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Counts, for tfidf, the sequences holding each index."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def _oov_index(self):
        return self.word_index.get(self.oov_token) if self.oov_token is not None else None

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        oov = self._oov_index()
        for text in texts:
            vect = []
            for w in self._sequence(text):
                i = self.word_index.get(w)
                if i is not None:
                    if self.num_words and i >= self.num_words:
                        if oov is not None:
                            vect.append(oov)
                    else:
                        vect.append(i)
                elif self.oov_token is not None:
                    vect.append(oov)
            yield vect

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        oov = self._oov_index()
        for seq in sequences:
            vect = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None:
                    if self.num_words and num >= self.num_words:
                        if oov is not None:
                            vect.append(self.index_word[oov])
                    else:
                        vect.append(word)
                elif self.oov_token is not None:
                    vect.append(self.index_word[oov])
            yield " ".join(vect)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """[len(sequences), num_words]: per index "binary" presence, "count", "freq" (count / length) or "tfidf"
        ((1 + log count) * log(1 + documents / (1 + documents holding it)))."""
        if not self.num_words:
            if not self.word_index:
                raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
            num_words = len(self.word_index) + 1
        else:
            num_words = self.num_words
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError("Unknown vectorization mode:", mode)
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            counts = collections.Counter(j for j in seq if j < num_words)
            for j, c in counts.items():
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                else:
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[i][j] = (1 + np.log(c)) * idf
        return x

    def get_config(self):
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
                "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs):
        return json.dumps({"class_name": self.__class__.__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string):
    """The Tokenizer a to_json() string describes (its counts and index included)."""
    config = dict(json.loads(json_string).get("config"))
    word_counts = json.loads(config.pop("word_counts"))
    word_docs = json.loads(config.pop("word_docs"))
    index_docs = {int(k): v for k, v in json.loads(config.pop("index_docs")).items()}
    index_word = {int(k): v for k, v in json.loads(config.pop("index_word")).items()}
    word_index = json.loads(config.pop("word_index"))
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = collections.OrderedDict(word_counts)
    tokenizer.word_docs = collections.defaultdict(int, word_docs)
    tokenizer.index_docs = collections.defaultdict(int, index_docs)
    tokenizer.word_index, tokenizer.index_word = word_index, index_word
    return tokenizer
