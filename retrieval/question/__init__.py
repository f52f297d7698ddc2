"""What a question asks: the subject it names (by the names text writes), its instants and period,
the attributes it means, and the plan (read path steps 1-3)."""
