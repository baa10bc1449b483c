"""A matrix on a cluster: what each lane asks of it (resources.py); on Slurm, the batch scripts (slurm_scripts.py),
their submission (slurm_submit.py) and following them to the end (slurm_follow.py); for Kubernetes, Indexed Jobs
written for `kubectl apply` (k8s.py)."""
