"""keras.preprocessing.text: Tokenizer, tokenizer_from_json, text_to_word_sequence, one_hot, hashing_trick."""
from .._text_preprocessing import (Tokenizer, hashing_trick, one_hot, text_to_word_sequence,  # noqa: F401
                                   tokenizer_from_json)
