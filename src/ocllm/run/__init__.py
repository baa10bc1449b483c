"""The run side: lanes, prompts, the HTTP client, managed servers, the run loop and its run directory."""
