"""Reports: the figures of a run, a comparison or a matrix, as Markdown and self-contained HTML."""
