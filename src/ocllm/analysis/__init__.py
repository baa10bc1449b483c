"""The analysis side: re-scoring, the audit, aggregate figures, statistics, comparisons, merging shards."""
