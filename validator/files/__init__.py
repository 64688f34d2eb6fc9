"""Writing files safely: atomic and durable writes, Ctrl-C, and YAML people also edit or that orv generates."""
