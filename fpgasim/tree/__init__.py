"""Token trees: shapes, masks, builders and acceptance models."""
