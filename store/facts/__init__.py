"""Facts: the write path's rules and its candidates, versions and their rows, equal-start conflicts
and their policies and resolution, retraction, weak signals, and exact reads."""
