"""The context block: which evidence lines it shows and how it marks them, the key lines, the
budget and the citations (read path steps 4-5). Pure."""
