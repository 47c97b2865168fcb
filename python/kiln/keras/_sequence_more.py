"""More of keras.preprocessing.sequence (Keras 2.15): make_sampling_table and skipgrams (word2vec's training
pairs, drawn with Python's `random` as Keras draws them, so a seed gives Keras' pairs), and TimeseriesGenerator
(batches of windows over a series, a keras.utils.Sequence)."""
import random

import numpy as np

from ._sequence_utils import Sequence


def make_sampling_table(size, sampling_factor=1e-5):
    """The probability of keeping the word of frequency rank i (Zipf's law, word2vec's subsampling formula)."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True, categorical=False,
              sampling_table=None, seed=None):
    """(couples, labels): [word, context] pairs within window_size (label 1, [0, 1] when categorical), then
    negative_samples times as many [word, random index] pairs (label 0); index 0 is skipped; shuffled together."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10e6)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


class TimeseriesGenerator(Sequence):
    """Batches of (windows, targets): the sample ending before row r holds data[r - length:r:sampling_rate] and
    its target is targets[r], for r from start_index + length to end_index by `stride` (random rows when
    shuffle)."""

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0, end_index=None,
                 shuffle=False, reverse=False, batch_size=128):
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while target "
                             f"length is {len(targets)}")
        self.data, self.targets, self.length = data, targets, length
        self.sampling_rate, self.stride = sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, as "
                             "no part of the sequence would be left to be used as current step.")

    def __len__(self):
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)
