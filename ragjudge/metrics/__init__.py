"""Pure metric functions (no I/O, no models loaded here except through explicit scorer objects)."""
