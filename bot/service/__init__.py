"""The transport-neutral bot: what tracebot does with a message, a /trace command or a click.

Built from plain objects (store, knowledge holder, plugin host, job pools, an :class:`.outbox.Outbox`)
by :func:`.build.build_service`; Slack (``tracebot.slack``) and the console (``tracebot.console``) only
translate their input into :mod:`.inbound` types and provide an outbox."""
