"""What a run proves about its recipe: agreement, identity, signatures, arrival order, and the tier it earns."""
