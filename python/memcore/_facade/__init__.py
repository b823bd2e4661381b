"""The facade's parts: one mixin per capability, combined in `memcore.memory.Memory`."""
