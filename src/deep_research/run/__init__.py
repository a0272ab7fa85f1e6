"""The headless driver: the pipeline definition, the driver, the governor, the two seams (search
source and reasoner), the reasoners, the local corpus and the progress view.

Imported lazily: the hook guard loads single modules of this wing and nothing else.
"""
