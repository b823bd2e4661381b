"""A small thread-safe LRU cache with hit statistics, for query embeddings."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypedDict, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class CacheInfo(TypedDict):
    """Counters of an :class:`LRUCache`."""

    hits: int
    misses: int
    size: int
    maxsize: int


class LRUCache(Generic[K, V]):
    """Least-recently-used mapping with a fixed capacity.

    ``functools.lru_cache`` wraps a function and cannot be sized per instance, inspected
    per key, or shared between a lookup and a later insert, which the service needs because
    the value is computed outside the lock (inference must not serialise callers).
    """

    def __init__(self, maxsize: int) -> None:
        """Create an empty cache.

        Args:
            maxsize: Capacity; 0 disables caching (every lookup misses, nothing is kept).
        """
        if maxsize < 0:
            raise ValueError("maxsize must be >= 0")
        self._maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    def get(self, key: K) -> V | None:
        """The cached value, marked most recently used, or ``None`` on a miss."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self._misses += 1
                return None
            self._data.move_to_end(key)
            self._hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        """Insert or refresh ``key``, evicting the least recently used entry when full."""
        if self._maxsize == 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry; the counters are kept."""
        with self._lock:
            self._data.clear()

    def info(self) -> CacheInfo:
        """Hits, misses, current size and capacity."""
        with self._lock:
            return CacheInfo(
                hits=self._hits, misses=self._misses, size=len(self._data), maxsize=self._maxsize
            )
