"""Memory health: one verdict per expected memory, read from content-free receipts.

``expectations`` holds the input and output models, ``classifier`` the pure decision rules
(the first failing layer wins), ``cases`` the nine-case fixture that pins them down.
"""
