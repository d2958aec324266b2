"""The built-in /trace plugins (py-spy, SLURM, SageMaker): they see only :mod:`tracebot.plugin_api`."""
