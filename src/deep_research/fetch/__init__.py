"""What was read: the network policy and guard, the fetcher, robots.txt, extraction and its
bounded process, the retained corpus, the fetch log, the host allow-list, the re-fetch and the
web-archive client.

Imported lazily: the hook guard loads single modules of this wing and nothing else.
"""
