"""Pretraining data (section ftip-0014): corpora, mixtures, cleaning, windows, packing and the loss.

Modules: :mod:`~ftipbook.data.corpus` (documents and sources, with no downloads),
:mod:`~ftipbook.data.mixture` (source mixtures), :mod:`~ftipbook.data.cleaning` (filter,
deduplication, decontamination, ordered pipeline), :mod:`~ftipbook.data.windows` (context
windows, packing, the :class:`~ftipbook.data.windows.PackedBatch` contract and the resumable
batch iterator) and :mod:`~ftipbook.data.objective` (masked token NLL and the objectives).
"""
