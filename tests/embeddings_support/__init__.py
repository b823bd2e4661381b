"""Helpers for the embeddings tests: shared test models, a fake Hugging Face hub, wheels."""
