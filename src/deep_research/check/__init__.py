"""``deep-research check REPORT``: does each cited sentence of a report say what its pages say?

A report written by any tool or person — Markdown with inline links, numbered references,
footnotes or bare URLs, HTML, plain text — is read (:mod:`.reading`) into sentences and their
citations (:mod:`deep_research.gates.citations`, the reader dossier mode shares); every cited URL
is fetched once through the project's fetcher into a check folder (:mod:`.pages`); each sentence
is judged against its pages by the gates a research run uses — the quote locator, the literal
checks, negation and overlap (:mod:`.judge`), with a model's vote on the sentences those cannot
decide (:mod:`.votes`); the result is printed, kept in the folder with an annotated copy of the
report (:mod:`.output`), and re-derived offline from the folder alone (:mod:`.folder`).
The command's arguments live in
:mod:`.command`.
"""
