export const meta = {
  name: 'research-run',
  title: 'Deep research',
  description: 'Deep research: a started brief to its verdict',
  whenToUse: 'Only when the deep-research skill says to launch it, with the args `deep-research start` printed. Code decides every step; every agent answer is checked and kept in the brief by code.',
  phases: [
    { title: 'plan', detail: 'the question split into sub-questions and queries' },
    { title: 'cast', detail: 'round 1: one fetcher per sub-question, pages fetched and kept' },
    { title: 'normalize', detail: 'the findings become source rows' },
    { title: 'round2', detail: 'counter-queries: evidence against round 1' },
    { title: 'claims', detail: 'the claim graph, then claims.json' },
    { title: 'trace', detail: 'every citation traced to its kept text' },
    { title: 'entail', detail: 'entailment judges on the load-bearing claims' },
    { title: 'panel', detail: 'skeptics vote on every supported claim' },
    { title: 'triangulate', detail: 'independence, agreement and confidence' },
    { title: 'refetch', detail: 'a sample of the cited pages fetched again' },
    { title: 'ciber', detail: 'the high-confidence claims re-framed' },
    { title: 'synthesize', detail: 'the answer, from the verified claims only' },
    { title: 'verdict', detail: 'the verdict, by rule' },
    { title: 'render', detail: 'report.md' },
  ],
}

// The stepper's answer is replaced by the step code computed, so its schema admits any object
// (tests/plugin/test_workflow_script.py checks this literal against schemas/workflow-step).
const STEP_SCHEMA = { type: 'object' }
// Steps one run may take: a full run takes about 15; more means code keeps asking for the same.
const MAX_STEPS = 60
// A stepper that ends without an answer this many times in a row stops the run.
const MAX_STEPPER_FAILURES = 3

const brief = args && typeof args.brief === 'string' ? args.brief : ''
// Code hands every step: the first in args (`deep-research start` printed it), each next one
// inside the answer that completed the step before it (its "next" field, written by the hook).
let step = args && args.step && typeof args.step.action === 'string' ? args.step : null
if (!brief || !step) {
  throw new Error('args must be the workflow object `deep-research start` (or resume) printed')
}

function isStep(value) {
  return Boolean(value) && typeof value === 'object' && typeof value.action === 'string'
}

let stepperFailures = 0
let current = ''
for (let n = 1; n <= MAX_STEPS; n++) {
  for (const line of step.log || []) log(line)
  // Every phase that finished since the last step is ticked with its figure, the ones code ran
  // inside the step (normalize, trace, triangulate, ...) included: a phase never entered would
  // look skipped in /workflows.
  for (const done of step.finished || []) {
    if (done.phase !== current) {
      current = done.phase
      phase(current)
    }
    log(done.line)
  }
  if (step.phase && step.phase !== current && step.action !== 'done') {
    current = step.phase
    phase(current)
  }
  if (step.action === 'done' || step.action === 'stop') {
    log(`${step.action}: ${step.why}`)
    return { ...step, brief }
  }
  const tasks = step.tasks || []
  log(`${step.phase}: ${step.why} (${tasks.length} agent${tasks.length === 1 ? '' : 's'})`)
  const answers = await parallel(
    tasks.map((task) => () =>
      agent(task.prompt, {
        agentType: task.agent,
        schema: task.schema,
        label: task.label,
        phase: step.phase,
      }),
    ),
  )
  const carrier = answers.find((answer) => answer && isStep(answer.next))
  if (carrier) {
    step = carrier.next
    continue
  }
  // No answer brought the next step (an agent ended without one): the stepper asks code for
  // it, with the command code wrote; code marks failed only the tasks it kept no answer for.
  tasks.forEach((task, i) => {
    if (!answers[i]) log(`${task.id}: the agent ended without an answer; code records it`)
  })
  const fallback = step.fallback
  let asked = null
  while (!isStep(asked) && stepperFailures < MAX_STEPPER_FAILURES) {
    asked = await agent(fallback, {
      agentType: 'deep-research:stepper',
      schema: STEP_SCHEMA,
      label: `step ${n + 1}`,
      phase: current || 'plan',
    })
    if (!isStep(asked)) {
      stepperFailures += 1
      log(`step ${n + 1}: the stepper ended without a step (${stepperFailures} in a row)`)
    }
  }
  if (!isStep(asked)) {
    return { action: 'stop', why: 'the stepper failed repeatedly', brief }
  }
  stepperFailures = 0
  step = asked
}
log(`stopped after ${MAX_STEPS} steps: code kept asking for more`)
return { action: 'stop', why: `more than ${MAX_STEPS} steps`, brief }
