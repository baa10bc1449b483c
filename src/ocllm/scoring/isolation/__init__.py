"""Isolation of the programs the code room runs: what a sandbox adds around the process, beyond its namespaces and
limits (seccomp.py: the system calls it refuses)."""
