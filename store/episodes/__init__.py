"""Episodes: recorded once per id, their vectors, outcomes and extraction jobs, stubs left by
deletion, and the bulk import."""
