"""The command line: the click group (``app``), the options the commands share
(``options``), what they share when they run (``run``), and one module a command."""
