"""The timeline pages: sessions, layout, pages, and a real browser."""
