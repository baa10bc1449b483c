"""Files on disk: atomic writes, JSON read with errors a user can act on, and what an output may replace."""
