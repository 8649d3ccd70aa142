"""The ledger: one user-level SQLite file that remembers every bug root across campaigns.

Every campaign, experiment trial and ``recheck`` records its roots there by the same key (the root
signature): when each was first and last seen, by which campaigns, which TVM versions it affects
(``seedzer versions``) and the state a user gives it (new, reported with a link, fixed, wont-fix).
``status`` marks roots the ledger already knew, ``seedzer bugs`` lists and exports them, and a campaign
counts a root marked reported (or fixed, or wont-fix) as known instead of reporting it again.
"""
