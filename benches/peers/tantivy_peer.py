"""tantivy-py: the Python binding of the BM25 engine memcore's text index is built on."""

from __future__ import annotations

import time

import numpy as np
import tantivy

from benches.peers import Peer


class TantivyPeer(Peer):
    name = "tantivy-py"
    supports = frozenset({"text"})

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        start = time.perf_counter()
        schema = tantivy.SchemaBuilder()
        # Stemmed English, like memcore's default analyser.
        schema.add_text_field("body", stored=False, tokenizer_name="en_stem")
        schema.add_integer_field("id", stored=True, indexed=False)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(schema.build(), path=str(self.directory))
        writer = self.index.writer()
        for i, text in enumerate(texts):
            writer.add_document(tantivy.Document(body=text, id=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        return time.perf_counter() - start

    def search_text(self, text: str, k: int) -> list[int]:
        # Lenient parsing: user text holds ':' and quotes, which the strict syntax rejects.
        query, _errors = self.index.parse_query_lenient(text, ["body"])
        hits = self.searcher.search(query, k).hits
        return [int(self.searcher.doc(address)["id"][0]) for _score, address in hits]

    def close(self) -> None:
        self.searcher = None
        self.index = None


PEER = TantivyPeer
