export const meta = {
  name: 'research-run',
  title: 'Deep research',
  description: 'Deep research: a started brief to its verdict',
  whenToUse: 'Only when the deep-research skill says to launch it, with args {"brief": "<the brief folder deep-research start printed>"}. Code decides every step (`deep-research step`); every agent answer is checked and kept in the brief by code.',
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
if (!brief) {
  throw new Error('args.brief is required: the brief folder `deep-research start` printed')
}

function quoted(word) {
  return "'" + word.split("'").join("'\\''") + "'"
}

function stepCommand(failed) {
  const words = ['deep-research step', quoted(brief), '--json']
  if (failed.length > 0) words.push('--failed', failed.join(','))
  return words.join(' ')
}

let failed = []
let stepperFailures = 0
let current = ''
for (let n = 1; n <= MAX_STEPS; n++) {
  const command = stepCommand(failed)
  const step = await agent(`Run this command with Bash, exactly as written:\n${command}`, {
    agentType: 'deep-research:stepper',
    schema: STEP_SCHEMA,
    label: `step ${n}`,
    phase: current || 'plan',
  })
  if (!step || typeof step.action !== 'string') {
    stepperFailures += 1
    log(`step ${n}: the stepper ended without a step (${stepperFailures} in a row)`)
    if (stepperFailures >= MAX_STEPPER_FAILURES) {
      return { action: 'stop', why: 'the stepper failed repeatedly', brief }
    }
    continue
  }
  stepperFailures = 0
  failed = []
  for (const line of step.log || []) log(line)
  // Every phase that finished since the last step is ticked with its figure, the ones code ran
  // inside `step` (normalize, trace, triangulate, ...) included: a phase never entered would
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
  tasks.forEach((task, i) => {
    if (!answers[i]) {
      failed.push(task.id)
      log(`${task.id}: the agent ended without an answer; code records it`)
    }
  })
}
log(`stopped after ${MAX_STEPS} steps: code kept asking for more`)
return { action: 'stop', why: `more than ${MAX_STEPS} steps`, brief }
