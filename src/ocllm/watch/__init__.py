"""`ocllm watch DIR`: a live view of a run, a matrix or a sharded matrix, read from its run folders as they grow.

It reads and never writes there: finding the run folders (`finding`), reading what each samples.jsonl gained since
the last look (`tail`), deciding the new samples and counting them (`run_state`), the figures per lane and shard with
the paired difference to a baseline (`figures`), and drawing them in the terminal (`terminal`) and as a
self-refreshing page (`page`, served by `serving`); `loop` refreshes them until every run has finished.
"""
