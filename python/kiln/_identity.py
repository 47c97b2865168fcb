"""Trace keys for objects keyed by identity: a number per live object that a
new object never reuses (id() can be reused once an object dies)."""
import itertools
import weakref

_numbers = weakref.WeakKeyDictionary()
_strong = {}  # objects that cannot be weakly referenced: by id, kept alive
_counter = itertools.count(1)


def identity_key(obj):
    try:
        n = _numbers.get(obj)
        if n is None:
            n = _numbers[obj] = next(_counter)
        return n
    except TypeError:  # not weakly referenceable (or unhashable)
        entry = _strong.get(id(obj))
        if entry is None or entry[0] is not obj:
            entry = _strong[id(obj)] = (obj, next(_counter))
        return entry[1]
