"""Software stacks: what a pin is, llama.cpp builds, Megatron arguments, and how a pinned stack is launched again."""
