"""Required-substring tasks: every listed substring must appear in the visible answer."""
