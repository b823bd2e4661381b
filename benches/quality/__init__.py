"""Retrieval quality on public data: LoCoMo (conversation memory) and CoSQA (code search).

    python -m benches.quality --locomo FILE --cosqa DIR [--quick] [--out DIR]

Any file in the same format works, so other conversations or query sets can be scored.
"""
