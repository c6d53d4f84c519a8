"""`coursekit lsp`: the course's own meaning in the editor (diagnostics, hover, definition,
completion, code actions) over the Language Server Protocol on stdio.

pygls and lsprotocol are imported only below this package, and only when the server starts:
`coursekit check` never pays for them.
"""
