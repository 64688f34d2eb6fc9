"""orv: the validator that guards the OpenRecipes registry."""

__version__ = "0.1.0"
