"""A matrix on a Slurm cluster: what each lane asks of it (resources.py), the batch scripts (scripts.py), their
submission (submit.py) and following them to the end (follow.py)."""
