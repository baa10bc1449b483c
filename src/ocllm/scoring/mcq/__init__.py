"""Multiple-choice tasks: the answer letter a model states, read by the rules of docs/scoring.md."""
