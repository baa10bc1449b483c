# A package, so that its conftest.py is imported as `real_server.conftest` and never shadows tests/conftest.py
# (which tests/test_*.py import as `conftest`).
