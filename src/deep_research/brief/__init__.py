"""The brief on disk: its layout and lock (:mod:`.layout`), how its files are read
(:mod:`.readers`) and written (:mod:`.writers`), and the records it holds beside the artifact
models — run.json (:mod:`.start_record`), trace.json's phase entries (:mod:`.trace_phases`) and
claims and trace written back in one locked step (:mod:`.record`)."""
