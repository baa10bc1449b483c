"""ocllm: benchmark harness for local LLMs behind OpenAI-compatible endpoints."""

__version__ = "0.1.0"
