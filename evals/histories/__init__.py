"""Generated histories with gold answers: the customers family, the public-records family and the
careers family told in paragraphs."""
