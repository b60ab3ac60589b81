"""What every lesson's kernel sets up: the course device, seeds and print options,
compact tracebacks, the environment report (``doctor``) and lesson 13's two-rank launcher."""
