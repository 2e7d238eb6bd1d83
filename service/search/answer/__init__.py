"""The answer: hits mapped to results, passages chosen and ranked, fitted to a budget, rendered for people."""
