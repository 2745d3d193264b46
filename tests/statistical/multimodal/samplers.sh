# The sampler blocks of the multimodal study (sourced by tests/statistical/multimodal_study.sh).
# "Defaults" are each sampler as its documentation says to write it with nothing else set (issue 36,
# item 5); "*_docs" are what docs/stan.md recommends for a Stan model today, copied from its
# "Samplers that need a reference density" section and its NUTS example.
sampler_block() {  # sampler_block NAME -> the text inside sampler { }
  case "$1" in
    nuts) echo 'nuts {}' ;;
    pe) echo 'pseudo_extended { n_pseudo: 5 }' ;;
    pe_tempered) echo 'pseudo_extended { n_pseudo: 5 instrumental: TEMPERED }' ;;
    pt) echo 'parallel_tempering {}' ;;
    ct) echo 'continuous_tempering {}' ;;
    st) echo 'simulated_tempering {}' ;;
    ais) echo 'annealed_importance {}' ;;
    nuts_docs) echo 'nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } }' ;;
    pe_docs) echo 'pseudo_extended { n_pseudo: 5 nuts { step_size: 0.1 adaptation { enabled: true } } }' ;;
    pt_docs) echo 'parallel_tempering { ladder { n_levels: 8 } reference { fitted { variational {} } } nuts { step_size: 0.1 adaptation { enabled: true } } }' ;;
    pt_power_docs) echo 'parallel_tempering { ladder { n_levels: 8 } nuts { step_size: 0.1 adaptation { enabled: true } } }' ;;
    ct_docs) echo 'continuous_tempering { base { variational {} } nuts { step_size: 0.1 adaptation { enabled: true } } }' ;;
    st_docs) echo 'simulated_tempering { ladder { n_levels: 8 } reference { fitted { variational {} } } nuts { step_size: 0.1 adaptation { enabled: true } } }' ;;
    ais_docs) echo 'annealed_importance { ladder { n_levels: 100 } reference { fitted { variational {} } } nuts { step_size: 0.1 } }' ;;
    *) return 1 ;;
  esac
}
known_samplers() { echo "nuts pe pe_tempered pt ct st ais nuts_docs pe_docs pt_docs pt_power_docs ct_docs st_docs ais_docs"; }
